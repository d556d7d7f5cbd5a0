#include "core/base/parallel_for.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <immintrin.h>

namespace pe {
namespace {

// How long a waiting thread polls before it parks on a condition variable.
// Waking a parked thread costs tens of microseconds (more in a VM, where
// the idle core is halted), a tenth of a 4096 x 512 table; polling this
// long after each job costs at most this much CPU per job. OpenMP runtimes
// make the same trade (KMP_BLOCKTIME, 200 ms by default).
constexpr auto kSpin = std::chrono::microseconds(200);

// Polls `done` until it holds or kSpin has passed; true when it held.
// Between rounds of 64 polls (a few microseconds) the thread yields its
// core: on a machine with more runnable threads than cores, the thread
// being waited for may be the one that needs it (pure polling there made a
// sixth of a 1 GiB verify's CPU time, and its wall time longer); on an idle
// core the yield returns at once, so the wake-up stays as quick.
template <typename Pred>
bool SpinFor(Pred done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      _mm_pause();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
    std::this_thread::yield();
  }
}

// True on a thread while it runs a ParallelFor task: a nested ParallelFor
// then runs its tasks itself, one after another (the pool is busy with the
// outer call; waiting for it would deadlock).
thread_local bool in_task = false;

// Workers wait for a new generation of work; task k of a generation goes to
// worker k. The pool lives until exit (detached workers parked on a
// condition variable hold no resources worth freeing).
class Pool {
 public:
  void Run(int n, const std::function<void(int)>& fn) {
    std::lock_guard<std::mutex> serial(run_mu_);
    if (n <= 0) return;
    const int helpers = n - 1;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (static_cast<int>(started_) < helpers) {
        const int id = started_++;
        std::thread([this, id] { Work(id); }).detach();
      }
      fn_ = &fn;
      active_ = helpers;
      pending_.store(helpers, std::memory_order_relaxed);
      errors_.assign(static_cast<std::size_t>(n), nullptr);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    in_task = true;
    try {
      fn(n - 1);
    } catch (...) {
      errors_[static_cast<std::size_t>(n - 1)] = std::current_exception();
    }
    in_task = false;
    const auto finished = [this] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!SpinFor(finished)) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, finished);
    }
    fn_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void Work(int id) {
    in_task = true;  // a worker only ever runs tasks
    std::uint64_t seen = 0;
    for (;;) {
      const auto woken = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!SpinFor(woken)) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, woken);
      }
      const std::function<void(int)>* fn;
      {
        // The generation, its task count and its function change together,
        // under the lock: read them together, so that a later generation's
        // task is never taken for this one's (and run twice).
        std::lock_guard<std::mutex> lock(mu_);
        seen = generation_.load(std::memory_order_relaxed);
        if (id >= active_) continue;  // not needed this time
        fn = fn_;
      }
      std::exception_ptr error;
      try {
        (*fn)(id);
      } catch (...) {
        error = std::current_exception();
      }
      errors_[static_cast<std::size_t>(id)] = error;  // this worker's own slot
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // Under the lock, so that a Run about to wait cannot miss it.
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_one();
      }
    }
  }

  std::mutex run_mu_;  // one Run at a time
  std::mutex mu_;      // guards fn_, active_, errors_' size, and the waits
  std::condition_variable wake_, done_;
  const std::function<void(int)>* fn_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  int started_ = 0, active_ = 0;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace

void ParallelFor(int n, const std::function<void(int)>& fn) {
  if (n <= 1 || in_task) {
    for (int k = 0; k < n; ++k) fn(k);
    return;
  }
  static Pool* pool = new Pool;  // never destroyed: detached workers use it
  pool->Run(n, fn);
}

}  // namespace pe
