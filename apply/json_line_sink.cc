#include "apply/json_line_sink.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/json_writer.h"

namespace binrelay::apply {
namespace {

constexpr size_t kBatchBytes = 1 << 20;

void AppendNumber(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

std::string_view RowOpName(RowOp op) {
  switch (op) {
    case RowOp::kInsert: return "insert";
    case RowOp::kUpdate: return "update";
    case RowOp::kDelete: return "delete";
  }
  return "?";
}

absl::Status JsonLineSink::OnRow(const RowChange& row) {
  std::string& out = pending_;
  out.append("{\"op\":\"");
  out.append(RowOpName(row.op));
  out.append("\",\"db\":");
  protocol::AppendJsonString(row.table->db, &out);
  out.append(",\"table\":");
  protocol::AppendJsonString(row.table->table, &out);
  out.append(",\"file\":");
  protocol::AppendJsonString(row.file, &out);
  out.append(",\"pos\":");
  AppendNumber(row.pos, &out);
  out.append(",\"gtid\":");
  if (row.gtid.empty()) {
    out.append("null");
  } else {
    protocol::AppendJsonString(row.gtid, &out);
  }
  out.append(",\"ts\":");
  AppendNumber(row.timestamp, &out);
  out.append(",\"before\":");
  out.append(row.before.empty() ? std::string_view("null") : row.before);
  out.append(",\"after\":");
  out.append(row.after.empty() ? std::string_view("null") : row.after);
  if (row.partial) out.append(",\"image\":\"partial\"");
  out.append("}\n");
  ++rows_open_;
  return absl::OkStatus();
}

absl::Status JsonLineSink::OnCommit() {
  committed_ = pending_.size();
  rows_committed_ += rows_open_;
  rows_open_ = 0;
  if (flush_each_commit_ || committed_ >= kBatchBytes) return Flush();
  return absl::OkStatus();
}

absl::Status JsonLineSink::Flush() {
  size_t done = 0;
  while (done < committed_) {
    ssize_t n = ::write(fd_, pending_.data() + done, committed_ - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("writing rows to the output failed: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  pending_.erase(0, committed_);
  committed_ = 0;
  return absl::OkStatus();
}

}  // namespace binrelay::apply
