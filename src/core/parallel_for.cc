#include "core/parallel_for.h"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pe {
namespace {

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
      pending_ = helpers;
      errors_.assign(static_cast<std::size_t>(n), nullptr);
      ++generation_;
    }
    wake_.notify_all();
    try {
      fn(n - 1);
    } catch (...) {
      errors_[static_cast<std::size_t>(n - 1)] = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    fn_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void Work(int id) {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (id >= active_) continue;  // not needed this time
      const std::function<void(int)>* fn = fn_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*fn)(id);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      errors_[static_cast<std::size_t>(id)] = error;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex run_mu_;  // one Run at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* fn_ = nullptr;
  std::uint64_t generation_ = 0;
  int started_ = 0, active_ = 0, pending_ = 0;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace

void ParallelFor(int n, const std::function<void(int)>& fn) {
  if (n <= 1) {
    if (n == 1) fn(0);
    return;
  }
  static Pool* pool = new Pool;  // never destroyed: detached workers use it
  pool->Run(n, fn);
}

}  // namespace pe
