// ParallelFor: runs a few tasks at once on long-lived worker threads.
//
// Contract: ParallelFor(n, fn) calls fn(0) ... fn(n - 1), each exactly once,
// fn(n - 1) on the calling thread and the others on workers that are created
// on first use and then kept (parked) for the life of the process, so that
// a short job (a 4096 x 512 table takes well under a millisecond) does not
// pay for creating threads each time. It returns when every call has
// returned; the first exception thrown by a call is rethrown on the calling
// thread after all have finished. Calls from several threads at once are
// serialised. A call from inside a task (nesting) runs its tasks on the
// calling thread, in order.
#pragma once

#include <functional>

namespace pe {

void ParallelFor(int n, const std::function<void(int)>& fn);

}  // namespace pe
