#include "core/formats/pump.h"

#include "core/base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace pe {

int CoreCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int EffectiveThreads(const WriteSettings& settings) {
  return settings.threads > 0 ? settings.threads : CoreCount();
}

namespace {

// Rows per pumped block: about kPumpBlockBytes (kPumpTextBlockBytes when
// the workers also encode text), at least one row.
std::int64_t PumpBlockRows(const TableInfo& info, bool encodes) {
  const std::size_t rb = std::max<std::size_t>(info.row_bytes(), 1);
  const std::size_t bytes = encodes ? kPumpTextBlockBytes : kPumpBlockBytes;
  const auto rows = static_cast<std::int64_t>(std::max<std::size_t>(bytes / rb, 1));
  return std::max<std::int64_t>(1, std::min(rows, info.rows));
}

// Blocks b = 0, 1, ... are produced by the workers into slot b % slots and
// consumed in order by the calling thread. A slot holding block b is reused
// for block b + slots once block b has been written.
class OrderedPipeline {
 public:
  OrderedPipeline(RowSource& source, const TableWriter& writer, std::int64_t block, int threads)
      : source_(source),
        writer_(writer),
        encode_(writer.encodes_rows()),
        info_(source.info()),
        block_(block),
        blocks_((info_.rows + block - 1) / block),
        // Two slots per worker, but never more slots than blocks: an 8 MiB
        // table in 4 MiB blocks had four fresh 4 MiB buffers, twice the
        // table, each page faulted in and zero-filled.
        slots_(static_cast<std::size_t>(std::min<std::int64_t>(2 * threads, std::max<std::int64_t>(blocks_, 1)))),
        buf_(slots_),
        text_(slots_),
        text_len_(slots_, 0),
        ready_(slots_, -1) {
    // Not zero-filled: every block is written whole by ReadRows before use.
    for (auto& b : buf_) b = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(block_) * info_.row_bytes());
    workers_.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Work(); });
  }

  ~OrderedPipeline() {
    Stop();
    for (auto& t : workers_)
      if (t.joinable()) t.join();
  }

  void Run(TableWriter& writer, const WriteSettings& settings) {
    for (std::int64_t b = 0; b < blocks_; ++b) {
      const std::size_t slot = static_cast<std::size_t>(b) % slots_;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return ready_[slot] == b || error_; });
        if (error_) std::rethrow_exception(error_);
      }
      const std::int64_t first = b * block_;
      const std::int64_t n = std::min(block_, info_.rows - first);
      try {
        if (encode_)
          writer.WriteEncoded(first, n, std::string_view(text_[slot].data(), text_len_[slot]));
        else
          writer.WriteRows(first, n, buf_[slot].get());
      } catch (...) {
        Stop();
        throw;
      }
      {
        std::lock_guard lock(mu_);
        consumed_ = b + 1;
      }
      cv_.notify_all();
      if (settings.progress) settings.progress(first + n, info_.rows);
    }
  }

 private:
  void Work() {
    for (;;) {
      const std::int64_t b = next_.fetch_add(1);
      if (b >= blocks_) return;
      const std::size_t slot = static_cast<std::size_t>(b) % slots_;
      {
        // The slot is free once the block that last used it is written.
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return consumed_ >= b - static_cast<std::int64_t>(slots_) + 1 || stop_; });
        if (stop_) return;
      }
      const std::int64_t first = b * block_;
      const std::int64_t n = std::min(block_, info_.rows - first);
      try {
        source_.ReadRows(first, n, buf_[slot].get());
        if (encode_) text_len_[slot] = writer_.EncodeRows(first, n, buf_[slot].get(), text_[slot]);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
        stop_ = true;
        cv_.notify_all();
        return;
      }
      {
        std::lock_guard lock(mu_);
        ready_[slot] = b;
      }
      cv_.notify_all();
    }
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }

  RowSource& source_;
  const TableWriter& writer_;
  const bool encode_;  ///< workers also encode (text writers)
  const TableInfo& info_;
  const std::int64_t block_, blocks_;
  const std::size_t slots_;
  std::vector<std::unique_ptr<std::byte[]>> buf_;
  std::vector<TextBuffer> text_;  ///< encoded bytes per slot (encode_): scratch, only grown
  std::vector<std::size_t> text_len_;  ///< bytes of text_ that hold the slot's block
  std::vector<std::int64_t> ready_;  ///< block held by each slot, -1 none
  std::atomic<std::int64_t> next_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t consumed_ = 0;  ///< blocks written so far
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace

unsigned long long MinOutputBytes(const TableInfo& info, Format format, const WriteSettings& settings) {
  const auto values = static_cast<unsigned long long>(info.rows) * static_cast<unsigned long long>(info.cols);
  switch (format) {
    case Format::kCsv:
    case Format::kJson: return 2 * values;  // a digit and a separator at least
    case Format::kHdf5:
      if (settings.hdf5_gzip_level > 0) return 0;
      break;
    default: break;
  }
  return values * Traits(info.dtype).size;
}

void PumpRows(RowSource& source, TableWriter& writer, const WriteSettings& settings) {
  const TableInfo& info = source.info();
  writer.Begin(info);
  const std::int64_t block = PumpBlockRows(info, writer.encodes_rows());
  const std::int64_t blocks = info.rows > 0 ? (info.rows + block - 1) / block : 0;
  const int threads = static_cast<int>(std::min<std::int64_t>(EffectiveThreads(settings), blocks));
  if (threads >= 2 && source.concurrent_reads()) {
    OrderedPipeline pipeline(source, writer, block, threads);
    pipeline.Run(writer, settings);
  } else {
    const auto buf = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(block) * info.row_bytes());
    for (std::int64_t first = 0; first < info.rows; first += block) {
      const std::int64_t n = std::min(block, info.rows - first);
      source.ReadRows(first, n, buf.get());
      writer.WriteRows(first, n, buf.get());
      if (settings.progress) settings.progress(first + n, info.rows);
    }
  }
  writer.End();
}

void ReadRowsParallel(RowSource& source, std::int64_t first, std::int64_t count,
                      std::byte* out, int threads) {
  const std::size_t rb = source.info().row_bytes();
  const std::int64_t t = source.concurrent_reads() ? std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)) : 1;
  if (t <= 1) {
    if (count > 0) source.ReadRows(first, count, out);
    return;
  }
  // Contiguous shares, one per thread, on the long-lived workers of
  // ParallelFor (a small table is done in less time than creating threads).
  ParallelFor(static_cast<int>(t), [&](int k) {
    const std::int64_t a = first + count * k / t, b = first + count * (k + 1) / t;
    source.ReadRows(a, b - a, out + static_cast<std::size_t>(a - first) * rb);
  });
}

}  // namespace pe
