// Fuzz target: what binrelay reads back from its own store directory after
// a crash or a tampered disk: the input is written as the index file, as a
// store era's entry and as a binlog file, then the index and the entry are
// read, the file's opening GTID state is read, and the recovery scan runs
// on it (cutting it at its last complete transaction, as at start). Files live in a private directory under
// /dev/shm (or TMPDIR), rewritten each run.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "replication/store_era.h"
#include "replication/store_index.h"
#include "replication/store_recovery.h"

namespace {

const std::string& Dir() {
  static const std::string* dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string t = std::string(base != nullptr ? base : "/dev/shm") + "/binrelay_fuzz_XXXXXX";
    if (mkdtemp(t.data()) == nullptr) std::abort();
    return new std::string(t);
  }();
  return *dir;
}

void Write(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay::replication;
  const std::string& dir = Dir();
  Write(dir + "/" + std::string(kStoreIndexName), data, size);
  (void)ReadStoreIndex(dir);
  (void)::mkdir((dir + "/era-1").c_str(), 0755);
  Write(dir + "/era-1/" + std::string(kEraEntryName), data, size);
  (void)ReadEraEntry(dir, 1);
  const std::string file = dir + "/binlog.000001";
  Write(file, data, size);
  (void)ListStoreFiles(dir);
  (void)ReadFirstGtids(file);
  (void)RecoverBinlogFile(file, /*durable=*/false);
  return 0;
}
