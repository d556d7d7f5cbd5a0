// Text from files made safe to print (EscapeText, XmlText) and the styling
// of reports (TextStyle): declared in the public pe/text.h, which this
// header shares with the core so every report escapes one way.
#pragma once

#include <pe/text.h>
