// MySQL streams served as MySQL serves them, checked against recorded
// replication streams: zongji's captures of what MySQL 8.4.8 sent for a
// COM_BINLOG_DUMP (fixtures zongji/binlog-mysql84*.packets.bin; see the
// fixtures' INDEX.md). The store is rebuilt from the captured events (the
// bytes before the dump's start position were not captured: a valid filler
// of the same length stands in for them), the same request is sent to
// binrelay's sender, and its stream must equal the capture event for event;
// the fake ROTATE may differ only in timestamp and server_id.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/checksum.h"
#include "replication/binlog_store.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/packet_framer.h"
#include "proxy/binlog_sender.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/raw_dump_client.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/store_feed.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::proxy {
namespace {

namespace fs = std::filesystem;

// Every event of a packets.bin capture (u32 length, payload with 0x00).
std::vector<std::string> CapturedEvents(const std::string& bytes) {
  std::vector<std::string> out;
  protocol::ByteCursor c(bytes);
  while (c.remaining() > 0) {
    uint32_t n = c.U32();
    std::string_view p = c.Bytes(n);
    EXPECT_TRUE(c.ok());
    if (!c.ok() || p.empty()) break;
    out.emplace_back(p.substr(1));
  }
  return out;
}

void SetU32(std::string* e, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*e)[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void FixCrc(std::string* e) {
  SetU32(e, e->size() - 4,
         protocol::Crc32(std::string_view(*e).substr(0, e->size() - 4)));
}

// A QUERY event of exactly `size` bytes ending at `end` (a comment), for
// the bytes the capture does not show.
std::string Filler(uint32_t size, uint32_t end) {
  std::string e(size, ' ');
  SetU32(&e, 0, 1);  // timestamp
  e[4] = static_cast<char>(protocol::kQueryEvent);
  SetU32(&e, 5, 1);  // server_id
  SetU32(&e, 9, size);
  SetU32(&e, 13, end);
  e[17] = e[18] = 0;  // flags
  for (size_t i = 19; i < 19 + 13; ++i) e[i] = 0;  // empty post-header
  e[19 + 13] = 0;     // empty database
  const std::string q = "# filler for bytes the capture does not show";
  std::copy(q.begin(), q.begin() + std::min<size_t>(q.size(), size - 19 - 14 - 4), e.begin() + 19 + 14);
  FixCrc(&e);
  return e;
}

// PREVIOUS_GTIDS with an empty set, for the filler's start.
std::string EmptyPreviousGtids(uint32_t end) {
  std::string e(19 + 8 + 4, '\0');
  SetU32(&e, 0, 1);
  e[4] = static_cast<char>(protocol::kPreviousGtidsEvent);
  SetU32(&e, 5, 1);
  SetU32(&e, 9, static_cast<uint32_t>(e.size()));
  SetU32(&e, 13, end);
  e[17] = static_cast<char>(0x80);  // IGNORABLE, as MySQL writes it
  FixCrc(&e);
  return e;
}

struct Rebuilt {
  std::string file1, file2;    // binlog images
  std::string name1, name2;
  uint32_t start = 0;          // where the captured dump started
};

// The stored files behind a capture of a mid-file dump of file 1 that went
// on into file 2.
Rebuilt Rebuild(const std::vector<std::string>& ev) {
  Rebuilt r;
  auto header = [](const std::string& e) {
    auto h = protocol::ParseEventHeader(e);
    EXPECT_TRUE(h.ok());
    return h.ok() ? *h : protocol::EventHeader{};
  };
  // ev[0] fake ROTATE, ev[1] FDE (rewritten: log_pos 0), ev[2...] events.
  protocol::ByteCursor rot(std::string_view(ev[0]).substr(19, ev[0].size() - 23));
  uint64_t start = rot.U64();
  r.name1 = std::string(rot.Rest());
  r.start = static_cast<uint32_t>(start);
  std::string fde = ev[1];
  SetU32(&fde, 13, 4 + static_cast<uint32_t>(fde.size()));
  FixCrc(&fde);
  std::string file = "\xfe" "bin" + fde;
  std::string prev = EmptyPreviousGtids(static_cast<uint32_t>(file.size() + 31));
  file += prev;
  file += Filler(static_cast<uint32_t>(start - file.size()), static_cast<uint32_t>(start));
  size_t i = 2;
  for (; i < ev.size(); ++i) {
    file += ev[i];
    protocol::EventHeader h = header(ev[i]);
    if (h.type == protocol::kRotateEvent && !h.artificial()) break;
  }
  r.file1 = file;
  // File 2: after the fake ROTATE, its FDE and what followed.
  ++i;
  protocol::ByteCursor rot2(std::string_view(ev[i]).substr(19, ev[i].size() - 23));
  rot2.U64();
  r.name2 = std::string(rot2.Rest());
  r.file2 = "\xfe" "bin";
  for (++i; i < ev.size(); ++i) r.file2 += ev[i];
  return r;
}

class BinlogSenderCaptureTest : public ::testing::TestWithParam<const char*> {};

// Guards: a MySQL 8.4 COM_BINLOG_DUMP served differently from MySQL: the
// mid-file FDE (log_pos 0, created 0, CRC), stored events byte for byte,
// the real ROTATE, the fake ROTATE and the next file's FDE with its flags.
TEST_P(BinlogSenderCaptureTest, StreamEqualsWhatMySql84Sent) {
  BINRELAY_REQUIRE_FIXTURE(GetParam());
  std::vector<std::string> captured =
      CapturedEvents(testing::ReadFileOrDie(testing::FixturePath(GetParam())));
  ASSERT_GT(captured.size(), 10u);
  Rebuilt r = Rebuild(captured);
  std::string dir = testing::MakeTestTempDir("sender_capture");
  {
    BR_ASSERT_OK_AND_ASSIGN(auto store, replication::BinlogStore::Open(dir));
    BR_ASSERT_OK(testing::FeedAsDump(r.file1, r.name1, 4, *store));
    BR_ASSERT_OK(testing::FeedAsDump(r.file2, r.name2, 4, *store));
    BR_ASSERT_OK(store->Flush());
    CommitSignal signal;
    DumpRegistry registry;
    BinlogSenderContext ctx{store.get(), &signal, &registry, 1, nullptr};
    // zongji's request: the file and position, flags 0, its server_id,
    // @master_binlog_checksum = @@global.binlog_checksum (CRC32).
    DumpRequest req;
    req.file = r.name1;
    req.position = r.start;
    req.server_id = 0;  // non-blocking here, to end at the store's end
    req.settings.checksum = "CRC32";
    BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(ctx, req));
    std::string wire;
    while (true) {
      BR_ASSERT_OK_AND_ASSIGN(DumpStream::Progress p, sender->Fill(&wire, 1 << 20));
      if (p != DumpStream::Progress::kMore) break;
    }
    protocol::PacketReader reader;
    reader.set_next_seq(1);
    char* dst = nullptr;
    reader.PrepareWrite(wire.size(), &dst);
    std::copy(wire.begin(), wire.end(), dst);
    reader.CommitWrite(wire.size());
    testing::DumpCapture ours, theirs;
    theirs.events = captured;
    theirs.eof = true;
    while (true) {
      BR_ASSERT_OK_AND_ASSIGN(auto p, reader.Next());
      if (!p) break;
      if (p->payload[0] == '\0') {
        ours.events.emplace_back(p->payload.substr(1));
      } else {
        ours.eof = static_cast<uint8_t>(p->payload[0]) == 0xFE;
      }
    }
    EXPECT_EQ(testing::CompareDumps(theirs, ours), "");
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(ZongjiCaptures, BinlogSenderCaptureTest,
                         ::testing::Values("zongji/binlog-mysql84.packets.bin",
                                           "zongji/binlog-mysql84-fullmeta.packets.bin"));

}  // namespace
}  // namespace binrelay::proxy
