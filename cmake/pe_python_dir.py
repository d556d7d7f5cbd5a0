"""Where `cmake --install` puts the pe Python package for an install prefix.

Usage: python3 cmake/pe_python_dir.py PREFIX
Prints two lines: the folder, and "found" when this interpreter searches
it (sys.path, or the user site folder, searched once it exists) or
"not-found" when it does not. /usr is Debian's /usr/lib/python3/dist-packages
(the .deb's place); for any other prefix P, the first of
P/lib/pythonX.Y/dist-packages (Debian's /usr/local) and
P/lib/pythonX.Y/site-packages (~/.local, a virtualenv, other systems) that
the interpreter searches, else the latter.
"""
import os
import site
import sys

prefix = os.path.normpath(os.path.abspath(os.path.expanduser(sys.argv[1])))
searched = {os.path.normpath(p) for p in sys.path if p}
if site.ENABLE_USER_SITE is not False:
    searched.add(os.path.normpath(site.getusersitepackages()))
if prefix == "/usr":
    folder = "/usr/lib/python3/dist-packages"
else:
    lib = os.path.join(prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}")
    candidates = [os.path.join(lib, "dist-packages"), os.path.join(lib, "site-packages")]
    folder = next((c for c in candidates if c in searched), candidates[-1])
print(folder)
print("found" if folder in searched else "not-found")
