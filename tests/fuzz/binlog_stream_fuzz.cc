// Fuzz target: bytes as a binlog file, through everything a binlog file
// reaches in binrelay: the file reader and event framer (magic, FDE,
// checksums), TransactionBoundary, every event parser, and the change
// decoder with every table subscribed, both ways a row is decoded (tail's
// JSON and the apply path's raw images, whose values are then rendered as
// SQL literals as a flush would).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "apply/change_decoder.h"
#include "apply/sql_literal.h"
#include "apply/subscription.h"
#include "protocol/row_image.h"
#include "replication/binlog_file_source.h"
#include "tests/fuzz/event_parsers.h"

namespace {

using binrelay::apply::ChangeSink;
using binrelay::apply::RowChange;

class JsonSink : public ChangeSink {
 public:
  absl::Status OnRow(const RowChange& row) override {
    bytes_ += row.before.size() + row.after.size();
    return absl::OkStatus();
  }
  absl::Status OnCommit() override { return absl::OkStatus(); }
  void OnRestart() override {}
  absl::Status OnEvent(const binrelay::protocol::EventView& ev,
                       const binrelay::protocol::FormatDescription& fd) override {
    binrelay::fuzz::ParseEvent(ev, fd, &scratch_);
    return absl::OkStatus();
  }

 private:
  size_t bytes_ = 0;
  std::string scratch_;
};

class ImageSink : public ChangeSink {
 public:
  bool wants_images() const override { return true; }
  absl::Status OnRow(const RowChange& row) override {
    for (std::string_view image : {row.before_image, row.after_image}) {
      if (image.empty() || row.partial) continue;
      sql_.clear();
      absl::Status s = binrelay::protocol::ForEachImageValue(
          image, *row.table, &scratch_, [&](size_t, const binrelay::protocol::ValueView* v) {
            binrelay::apply::AppendSqlLiteral(v, "utf8mb4", &sql_);
            sql_.push_back(',');
            return true;
          });
      (void)s;
    }
    return absl::OkStatus();
  }
  absl::Status OnCommit() override { return absl::OkStatus(); }
  void OnRestart() override {}

 private:
  std::string scratch_, sql_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* all = new binrelay::apply::Subscription(
      *binrelay::apply::Subscription::Parse("*.*"));
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  {
    JsonSink sink;
    binrelay::apply::ChangeDecoder decoder(all, nullptr, &sink);
    (void)binrelay::replication::FeedBinlogBytes(bytes, "fuzz.000001", decoder);
  }
  {
    ImageSink sink;
    binrelay::apply::ChangeDecoder decoder(all, nullptr, &sink);
    (void)binrelay::replication::FeedBinlogBytes(bytes, "fuzz.000001", decoder);
  }
  return 0;
}
