// Test helpers for the binlog-event tests: loading fixtures (gunzipping
// *.gz), listing every binlog/capture under the fixtures dir, reading the
// mysql-cdc-rs text companions (some are UTF-16LE), and walking a file.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/binlog_file_reader.h"
#include "protocol/event_header.h"
#include "protocol/packet_capture_reader.h"
#include "tests/harness/fixtures.h"

namespace binrelay::protocol::test {

inline std::string Gunzip(const std::string& gz) {
  std::string out;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return {};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  EXPECT_EQ(rc, Z_STREAM_END) << "gunzip failed";
  return out;
}

// Reads fixture `rel` ("dir/file"); *.gz are gunzipped.
inline std::string LoadFixture(const std::string& rel) {
  std::string data = binrelay::testing::ReadFileOrDie(binrelay::testing::FixturePath(rel));
  if (rel.size() > 3 && rel.substr(rel.size() - 3) == ".gz") return Gunzip(data);
  return data;
}

// Text of a companion file, converting UTF-16LE (with BOM) to ASCII/UTF-8
// (non-ASCII code units become '?', enough for the numbers we compare).
inline std::string LoadText(const std::string& rel) {
  std::string raw = binrelay::testing::ReadFileOrDie(binrelay::testing::FixturePath(rel));
  if (raw.size() >= 2 && static_cast<uint8_t>(raw[0]) == 0xFF && static_cast<uint8_t>(raw[1]) == 0xFE) {
    std::string out;
    for (size_t i = 2; i + 1 < raw.size(); i += 2) {
      const uint16_t u = static_cast<uint8_t>(raw[i]) | static_cast<uint8_t>(raw[i + 1]) << 8;
      if (u == '\r') continue;
      out.push_back(u < 0x80 ? static_cast<char>(u) : '?');
    }
    return out;
  }
  raw.erase(std::remove(raw.begin(), raw.end(), '\r'), raw.end());
  return raw;
}

enum class FixtureKind { kBinlog, kPackets };
struct FixtureFile {
  std::string rel;
  FixtureKind kind;
};

// Every binlog-shaped fixture: files starting with the magic (after gunzip)
// and zongji *.packets.bin captures.
inline std::vector<FixtureFile> AllBinlogFixtures() {
  namespace fs = std::filesystem;
  std::vector<FixtureFile> out;
  const fs::path root = binrelay::testing::FixturesDir();
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), root).string();
    if (rel.size() > 12 && rel.substr(rel.size() - 12) == ".packets.bin") {
      out.push_back({rel, FixtureKind::kPackets});
      continue;
    }
    std::string data = LoadFixture(rel);
    if (data.size() >= 4 && data.compare(0, 4, std::string(kBinlogMagic)) == 0) {
      out.push_back({rel, FixtureKind::kBinlog});
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.rel < b.rel; });
  return out;
}

// Walks a binlog image; calls `fn` per event. Returns the reader's final status.
inline absl::Status WalkBinlog(std::string_view data, const std::string& name,
                               const std::function<absl::Status(const EventView&,
                                                                const EventFramer&)>& fn) {
  auto reader = BinlogFileReader::Open(data, name);
  if (!reader.ok()) return reader.status();
  EventView ev;
  while (true) {
    auto more = reader->Next(&ev);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    absl::Status s = fn(ev, reader->framer());
    if (!s.ok()) return s;
  }
}

// The views point into `data`: passing a temporary string would leave them
// dangling, so that overload does not exist.
std::vector<EventView> AllEvents(std::string&& data) = delete;
inline std::vector<EventView> AllEvents(std::string_view data) {
  std::vector<EventView> out;
  absl::Status s = WalkBinlog(data, "", [&](const EventView& ev, const EventFramer&) {
    out.push_back(ev);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

}  // namespace binrelay::protocol::test
