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

const std::string& JsonLineSink::Cached(CachedField& f, std::string_view raw) {
  if (!f.valid || f.raw != raw) {
    f.raw.assign(raw);
    f.json.clear();
    protocol::AppendJsonString(raw, &f.json);
    f.valid = true;
    ++generation_;
  }
  return f.json;
}

absl::Status JsonLineSink::OnRow(const RowChange& row) {
  const std::string& db = Cached(db_, row.table->db);
  const std::string& table = Cached(table_, row.table->table);
  const std::string& file = Cached(file_, row.file);
  const bool has_gtid = !row.gtid.empty();
  const std::string* gtid = has_gtid ? &Cached(gtid_, row.gtid) : nullptr;
  if (!prefix_valid_ || prefix_generation_ != generation_ || prefix_op_ != row.op ||
      prefix_pos_ != row.pos || prefix_ts_ != row.timestamp || prefix_has_gtid_ != has_gtid) {
    std::string& p = prefix_;
    p.assign("{\"op\":\"");
    p.append(RowOpName(row.op));
    p.append("\",\"db\":");
    p.append(db);
    p.append(",\"table\":");
    p.append(table);
    p.append(",\"file\":");
    p.append(file);
    p.append(",\"pos\":");
    AppendNumber(row.pos, &p);
    p.append(",\"gtid\":");
    p.append(has_gtid ? std::string_view(*gtid) : std::string_view("null"));
    p.append(",\"ts\":");
    AppendNumber(row.timestamp, &p);
    p.append(",\"before\":");
    prefix_valid_ = true;
    prefix_generation_ = generation_;
    prefix_op_ = row.op;
    prefix_pos_ = row.pos;
    prefix_ts_ = row.timestamp;
    prefix_has_gtid_ = has_gtid;
  }
  std::string& out = pending_;
  out.append(prefix_);
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
