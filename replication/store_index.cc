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
#include "replication/store_era.h"

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


}  // namespace

int CompareBinlogNames(std::string_view a, std::string_view b) {
  const StoredFileName x = SplitStoredName(a), y = SplitStoredName(b);
  if (x.era != y.era) return x.era < y.era ? -1 : 1;
  a = x.source_name;
  b = y.source_name;
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

absl::Status ValidateStoredName(std::string_view name) {
  return ValidateBinlogName(SourceNameOf(name));
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

namespace {

// The binlog files of one directory of the store (the top level, era 0, or
// an era's subdirectory), appended to `out` under their stored names.
absl::Status ListFilesOfEra(const std::string& dir, uint32_t era,
                            std::vector<StoreFileEntry>* out) {
  const std::string era_dir = era == 0 ? dir : absl::StrCat(dir, "/", EraDirName(era));
  DIR* d = ::opendir(era_dir.c_str());
  if (d == nullptr) return ErrnoStatus(errno, "cannot list store directory", era_dir);
  absl::Status status;
  std::vector<uint32_t> eras;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name == kStoreIndexName || name == TempIndexName()) {
      continue;
    }
    std::string path = absl::StrCat(era_dir, "/", name);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      status = ErrnoStatus(errno, "cannot stat", path);
      break;
    }
    if (S_ISDIR(st.st_mode) && era == 0) {
      if (std::optional<uint32_t> n = ParseEraDirName(name); n && *n > 0) eras.push_back(*n);
      continue;
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
          "store directory ", era_dir, " holds ", name,
          ", which is not a binlog file (no \\xFEbin magic); move it away or use another "
          "directory"));
      break;
    }
    out->push_back({StoredNameOf(era, name), SourceGtids(), static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(d);
  for (size_t i = 0; status.ok() && i < eras.size(); ++i) {
    status = ListFilesOfEra(dir, eras[i], out);
  }
  return status;
}

}  // namespace

absl::StatusOr<std::vector<StoreFileEntry>> ListStoreFiles(const std::string& dir) {
  std::vector<StoreFileEntry> out;
  BR_RETURN_IF_ERROR(ListFilesOfEra(dir, 0, &out));
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
    GtidFlavour flavour = GtidFlavour::kNone;
    const bool named = f.size() == 3 && (f[1] == "none" || f[1] == "mariadb" || f[1] == "mysql");
    if (named) flavour = f[1] == "mariadb" ? GtidFlavour::kMariaDb
                         : f[1] == "mysql" ? GtidFlavour::kMysql
                                           : GtidFlavour::kNone;
    absl::StatusOr<SourceGtids> gtids =
        named ? SourceGtids::Parse(flavour, f[2]) : absl::InvalidArgumentError("");
    if (!named || !gtids.ok() || !ValidateStoredName(f[0]).ok()) {
      return absl::DataLossError(
          absl::StrCat("store index ", path, " line ", line_no,
                       " is not '<file>\\t<mariadb|mysql|none>\\t<gtid state>'"));
    }
    out.push_back({f[0], *std::move(gtids), 0});
  }
  return out;
}

absl::Status WriteStoreIndex(const std::string& dir, const std::vector<StoreFileEntry>& files,
                             bool durable) {
  std::string text;
  for (const StoreFileEntry& f : files) {
    absl::StrAppend(&text, f.name, "\t", AV(GtidFlavourName(f.first_gtids.flavour())), "\t",
                    f.first_gtids.StateText(), "\n");
  }
  return WriteFileAtomically(absl::StrCat(dir, "/", AV(kStoreIndexName)), text, 0644, durable);
}

absl::StatusOr<SourceGtids> ReadFirstGtids(const std::string& path) {
  // The state event follows the FDE (and, MySQL, nothing else): 1 MiB is far
  // more than an FDE plus a GTID_LIST/PREVIOUS_GTIDS of any real size.
  BR_ASSIGN_OR_RETURN(std::string head, ReadHead(path, 1 << 20));
  auto reader = protocol::BinlogFileReader::Open(head, path);
  if (!reader.ok()) return SourceGtids();
  protocol::EventView ev;
  for (int i = 0; i < 4; ++i) {
    auto more = reader->Next(&ev);
    if (!more.ok() || !*more) break;
    if (ev.type() == protocol::kGtidListEvent || ev.type() == protocol::kPreviousGtidsEvent) {
      return GtidsOfStateEvent(ev);
    }
  }
  return SourceGtids();
}

namespace {

// A GTID_LIST may name several servers of one domain; the position a file
// opens at keeps the highest seq_no per domain.
MariaGtidPosition HighestPerDomain(const MariaBinlogState& state) {
  MariaGtidPosition pos;
  for (const auto& e : state.ToGtidList()) {
    auto it = pos.domains().find(e.domain_id);
    if (it == pos.domains().end() || it->second.seq < e.seq_no) {
      pos.Update(MariaGtid{e.domain_id, e.server_id, e.seq_no});
    }
  }
  return pos;
}

}  // namespace

absl::StatusOr<std::string> FileForGtidPosition(const std::vector<StoreFileEntry>& files,
                                                const SourceGtids& position) {
  if (!position.known()) {
    return absl::InvalidArgumentError("a GTID position without its flavour names no file");
  }
  const MariaGtidPosition want = position.is_mariadb() ? position.maria().ToPosition()
                                                       : MariaGtidPosition();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    const SourceGtids& first = it->first_gtids;
    if (first.known() && first.flavour() != position.flavour()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GTID position ", position.PositionText(), " is a ",
          AV(GtidFlavourName(position.flavour())), " position, but stored file ", it->name,
          " holds a ", AV(GtidFlavourName(first.flavour())), " stream"));
    }
    // A file whose state event is not stored yet (its FDE may be committed
    // alone) is not passed: its state could be past the position.
    const bool passed =
        first.known() &&
        (first.empty() || (first.is_mysql() ? first.mysql().IsSubsetOf(position.mysql())
                                            : HighestPerDomain(first.maria()).IsAtOrBefore(want)));
    if (passed) return it->name;
  }
  return absl::NotFoundError(absl::StrCat(
      "no stored binlog file starts at or before GTID position ", position.PositionText(),
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
