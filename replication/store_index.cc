#include "replication/store_index.h"

#include "replication/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/errno_status.h"
#include "protocol/status_macros.h"
#include "replication/gtid_set.h"

namespace binrelay::replication {
namespace {

std::string TempIndexName() { return absl::StrCat(AV(kStoreIndexName), ".tmp"); }

// Reads at most `limit` bytes from the start of `path`.
absl::StatusOr<std::string> ReadHead(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string data(limit, '\0');
  size_t got = 0;
  while (got < limit) {
    ssize_t n = ::pread(fd, data.data() + got, limit - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoStatus(errno, "cannot read", path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

// A GTID_LIST may name several servers of one domain; a position keeps the
// newest (highest seq_no) per domain. Malformed parts are left for Parse to
// reject.
std::string NewestPerDomain(std::string_view list) {
  std::map<uint64_t, std::pair<uint64_t, std::string>> newest;
  std::vector<std::string> other;
  for (absl::string_view part : absl::StrSplit(AV(list), ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(part, '-');
    uint64_t domain = 0, seq = 0;
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &domain) || !absl::SimpleAtoi(f[2], &seq)) {
      other.emplace_back(part);
      continue;
    }
    auto it = newest.find(domain);
    if (it == newest.end() || it->second.first < seq) newest[domain] = {seq, std::string(part)};
  }
  for (auto& [domain, v] : newest) other.push_back(v.second);
  return absl::StrJoin(other, ",");
}

}  // namespace

int CompareBinlogNames(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

absl::Status ValidateBinlogName(std::string_view name) {
  bool bad = name.empty() || name.size() > 255 || name == "." || name == ".." ||
             name[0] == '.' || name == kStoreIndexName;
  for (char c : name) bad = bad || c == '/' || static_cast<unsigned char>(c) < 0x20;
  if (bad) {
    return absl::DataLossError(absl::StrCat(
        "binlog file name '", absl::CEscape(AV(name)),
        "' from the source is not a plain file name; refusing to use it as a path"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoreFileEntry>> ListStoreFiles(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(errno, "cannot list store directory", dir);
  std::vector<StoreFileEntry> out;
  absl::Status status;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name == kStoreIndexName || name == TempIndexName()) {
      continue;
    }
    std::string path = absl::StrCat(dir, "/", name);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      status = ErrnoStatus(errno, "cannot stat", path);
      break;
    }
    if (!S_ISREG(st.st_mode)) continue;
    auto head = ReadHead(path, protocol::kBinlogMagic.size());
    if (!head.ok()) {
      status = head.status();
      break;
    }
    // A crash can leave a file shorter than the magic; recovery removes it.
    if (*head != protocol::kBinlogMagic.substr(0, head->size())) {
      status = absl::FailedPreconditionError(absl::StrCat(
          "store directory ", dir, " holds ", name,
          ", which is not a binlog file (no \\xFEbin magic); move it away or use another "
          "directory"));
      break;
    }
    out.push_back({name, "", static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(d);
  if (!status.ok()) return status;
  std::sort(out.begin(), out.end(), [](const StoreFileEntry& a, const StoreFileEntry& b) {
    return CompareBinlogNames(a.name, b.name) < 0;
  });
  return out;
}

absl::StatusOr<std::vector<StoreFileEntry>> ReadStoreIndex(const std::string& dir) {
  std::string path = absl::StrCat(dir, "/", AV(kStoreIndexName));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("no store index ", path));
  std::vector<StoreFileEntry> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() != 2 || !ValidateBinlogName(f[0]).ok()) {
      return absl::DataLossError(absl::StrCat("store index ", path, " line ", line_no,
                                              " is not '<file>\\t<gtid state>'"));
    }
    out.push_back({f[0], f[1], 0});
  }
  return out;
}

absl::Status WriteStoreIndex(const std::string& dir, const std::vector<StoreFileEntry>& files,
                             bool durable) {
  std::string text;
  for (const StoreFileEntry& f : files) {
    absl::StrAppend(&text, f.name, "\t", f.first_gtid_state, "\n");
  }
  return WriteFileAtomically(absl::StrCat(dir, "/", AV(kStoreIndexName)), text, 0644, durable);
}

absl::StatusOr<std::string> ReadFirstGtidState(const std::string& path) {
  // The state event follows the FDE (and, MySQL, nothing else): 1 MiB is far
  // more than an FDE plus a GTID_LIST/PREVIOUS_GTIDS of any real size.
  BR_ASSIGN_OR_RETURN(std::string head, ReadHead(path, 1 << 20));
  auto reader = protocol::BinlogFileReader::Open(head, path);
  if (!reader.ok()) return std::string();
  protocol::EventView ev;
  for (int i = 0; i < 4; ++i) {
    auto more = reader->Next(&ev);
    if (!more.ok() || !*more) break;
    if (ev.type() == protocol::kGtidListEvent) {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(ev));
      return list.ToString();
    }
    if (ev.type() == protocol::kPreviousGtidsEvent) {
      return protocol::DecodeGtidSetText(ev.body);
    }
  }
  return std::string();
}

absl::StatusOr<std::string> FileForGtidPosition(const std::vector<StoreFileEntry>& files,
                                                std::string_view gtid) {
  // MySQL sets name a uuid followed by ':'; MariaDB positions never do.
  const bool mysql = gtid.find(':') != std::string_view::npos;
  std::optional<MysqlGtidSet> want_set;
  std::optional<MariaGtidPosition> want_pos;
  if (mysql) {
    BR_ASSIGN_OR_RETURN(want_set, MysqlGtidSet::Parse(gtid));
  } else {
    BR_ASSIGN_OR_RETURN(want_pos, MariaGtidPosition::Parse(gtid));
  }
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    bool passed = false;
    if (mysql) {
      auto first = MysqlGtidSet::Parse(it->first_gtid_state);
      passed = first.ok() && first->IsSubsetOf(*want_set);
    } else {
      auto first = MariaGtidPosition::Parse(NewestPerDomain(it->first_gtid_state));
      passed = first.ok() && first->IsAtOrBefore(*want_pos);
    }
    if (passed) return it->name;
  }
  return absl::NotFoundError(absl::StrCat(
      "no stored binlog file starts at or before GTID position ", AV(gtid),
      ": the files holding it were purged (or never stored)"));
}

absl::Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open directory", dir);
  int rc = ::fsync(fd);
  absl::Status s = rc == 0 ? absl::OkStatus() : ErrnoStatus(errno, "cannot fsync directory", dir);
  ::close(fd);
  return s;
}

}  // namespace binrelay::replication
