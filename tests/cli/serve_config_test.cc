#include "cli/serve_config.h"
#include "cli/shown_argument.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_cat.h"

namespace binrelay::cli {
namespace {

constexpr char kGood[] = R"(
# binrelay between db1 and its replicas
[source]
host = db1.example
port = 3307
user = repl
password = "s3cret # not a comment"
server_id = 4001
ssl_mode = required
start = mysql-bin.000042:4

[store]
dir = /var/lib/binrelay
sync = 100ms
retention_hours = 48
retention_bytes = 200G

[listen]
address = 0.0.0.0
port = 3306
server_id = 1
user = replica
password = r3pl
[http]
address = 127.0.0.1:8080
)";

absl::StatusOr<ServeConfig> Parse(std::string_view text,
                                  std::vector<std::string> overrides = {}) {
  auto ini = IniFile::Parse(text, "binrelay.cnf");
  if (!ini.ok()) return ini.status();
  for (const std::string& o : overrides) {
    if (absl::Status s = ini->Override(o); !s.ok()) return s;
  }
  return ParseServeConfig(*ini);
}

TEST(ServeConfigTest, ParsesEveryKeyOfTheSample) {
  auto c = Parse(kGood);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->upstream.connect.host, "db1.example");
  EXPECT_EQ(c->upstream.connect.port, 3307);
  EXPECT_EQ(c->upstream.connect.password, "s3cret # not a comment");
  EXPECT_EQ(c->upstream.server_id, 4001u);
  EXPECT_EQ(c->upstream.connect.tls, protocol::ConnectOptions::Tls::kRequired);
  EXPECT_EQ(c->upstream.start.kind, replication::StartSpec::Kind::kPosition);
  EXPECT_EQ(c->upstream.start.position.ToString(), "mysql-bin.000042:4");
  EXPECT_EQ(c->store.sync, ServeConfig::Store::Sync::kInterval);
  EXPECT_EQ(c->store.sync_interval.count(), 100);
  EXPECT_EQ(c->store.retention_bytes, 200ull << 30);
  EXPECT_EQ(c->listen.address, "0.0.0.0");
  EXPECT_EQ(c->listen.port, 3306);
  EXPECT_TRUE(c->http.enabled);
  EXPECT_EQ(c->http.port, 8080);
}

// Guards: the hard cap's three states (unset = default, 0 = never, a size)
// collapsing, or a cap below retention_bytes accepted.
TEST(ServeConfigTest, RetentionHardCapIsOptionalAndAtLeastTheSizeLimit) {
  auto c = Parse(kGood);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->store.retention_hard_cap_bytes.has_value());
  c = Parse(kGood, {"--store.retention_hard_cap_bytes=0"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->store.retention_hard_cap_bytes, 0u);
  c = Parse(kGood, {"--store.retention_hard_cap_bytes=300G"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->store.retention_hard_cap_bytes, 300ull << 30);
  c = Parse(kGood, {"--store.retention_hard_cap_bytes=100G"});  // below 200G
  EXPECT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "retention_hard_cap_bytes")) << c.status();
  c = Parse(kGood, {"--store.retention_hard_cap_bytes=lots"});
  EXPECT_FALSE(c.ok());
}

// Guards: a candidate parsed to the wrong host or port (the failover check
// would probe another server), IPv6 brackets kept in the host, a candidate
// named twice, or the [source] host missing from the list.
TEST(ServeConfigTest, SourceCandidatesAreHostPortWithTheSourcesCredentials) {
  auto c = Parse(kGood, {"--source.candidates=db2.example:3308, [::1]:3309,db3.example",
                         "--source.follow_read_only=on"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->source_candidates.size(), 4u);
  EXPECT_EQ(c->source_candidates[0].host, "db1.example");
  EXPECT_EQ(c->source_candidates[0].port, 3307);
  EXPECT_EQ(c->source_candidates[1].host, "db2.example");
  EXPECT_EQ(c->source_candidates[1].port, 3308);
  EXPECT_EQ(c->source_candidates[2].host, "::1");
  EXPECT_EQ(c->source_candidates[2].port, 3309);
  EXPECT_EQ(c->source_candidates[3].host, "db3.example");
  EXPECT_EQ(c->source_candidates[3].port, 3306);
  EXPECT_EQ(c->source_candidates[3].user, "repl");
  EXPECT_EQ(c->source_candidates[3].tls, protocol::ConnectOptions::Tls::kRequired);
  EXPECT_TRUE(c->follow_read_only);
  for (const char* bad : {"--source.candidates=db2:0", "--source.candidates=db2:x",
                          "--source.candidates=db1.example:3307", "--source.candidates=:3306",
                          "--source.candidates=DB1.example:3307", "--source.candidates=[::1",
                          "--source.candidates=[::1]]:3307", "--source.candidates=::1:3307",
                          "--source.candidates=a:b:c", "--source.candidates=[::1]:",
                          "--source.candidates=db2:"}) {
    auto refused = Parse(kGood, {bad});
    EXPECT_FALSE(refused.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "candidates")) << refused.status();
  }
}

// Guards: failover_after parsed to another duration, or accepted with no
// candidate to fail over to (binrelay would probe only the lost source).
TEST(ServeConfigTest, FailoverAfterNeedsCandidates) {
  auto c = Parse(kGood, {"--source.candidates=db2.example:3308", "--source.failover_after=15s"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->upstream.failover_after, std::chrono::seconds(15));
  c = Parse(kGood, {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->upstream.failover_after.count(), 0);  // by hand only, unless asked
  auto alone = Parse(kGood, {"--source.failover_after=15s"});
  ASSERT_FALSE(alone.ok());
  EXPECT_TRUE(absl::StrContains(alone.status().message(), "candidates")) << alone.status();
  EXPECT_FALSE(Parse(kGood, {"--source.candidates=db2.example:3308",
                             "--source.failover_after=soon"})
                   .ok());
}

TEST(ServeConfigTest, CommandLineOverridesFileKeys) {
  auto c = Parse(kGood, {"--store.dir=/tmp/relay", "--listen.port=13306"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->store.dir, "/tmp/relay");
  EXPECT_EQ(c->listen.port, 13306);
}

// The error must name the key and where it was set, so a DBA can fix it.
TEST(ServeConfigTest, InvalidValueNamesKeyAndLine) {
  std::string text = kGood;
  text.replace(text.find("sync = 100ms"), 12, "sync = often");
  auto c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "binrelay.cnf:")) << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "[store] sync")) << c.status();
}

TEST(ServeConfigTest, MissingRequiredKeyIsNamed) {
  std::string text = kGood;
  text.erase(text.find("dir = /var/lib/binrelay"), 23);
  auto c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "[store] dir")) << c.status();
}

// A typo must not silently fall back to a default retention.
TEST(ServeConfigTest, UnknownKeyIsAnError) {
  std::string text = kGood;
  text.replace(text.find("retention_hours"), 15, "retension_hours");
  auto c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "retension_hours")) << c.status();
}

TEST(ServeConfigTest, DuplicateKeyAndMalformedLinesAreErrors) {
  EXPECT_FALSE(IniFile::Parse("[a]\nk=1\nk=2\n", "f").ok());
  EXPECT_FALSE(IniFile::Parse("k=1\n", "f").ok());
  EXPECT_FALSE(IniFile::Parse("[a]\njustaword\n", "f").ok());
  EXPECT_FALSE(IniFile::Parse("[a\n", "f").ok());
}

TEST(ServeConfigTest, DashesAndCaseInKeysAreEquivalentAsInMyCnf) {
  auto ini = IniFile::Parse("[Store]\nRetention-Hours = 5\n", "f");
  ASSERT_TRUE(ini.ok());
  ASSERT_NE(ini->Find("store", "retention_hours"), nullptr);
  EXPECT_EQ(ini->Find("store", "retention_hours")->text, "5");
}

TEST(ServeConfigTest, SizesAndDurations) {
  EXPECT_EQ(*ParseByteSize("512M"), 512ull << 20);
  EXPECT_EQ(*ParseByteSize("1024"), 1024u);
  EXPECT_FALSE(ParseByteSize("lots").ok());
  EXPECT_FALSE(ParseByteSize("99999999999T").ok());  // overflow
  EXPECT_EQ(ParseDuration("250ms")->count(), 250);
  EXPECT_EQ(ParseDuration("2s")->count(), 2000);
  EXPECT_EQ(ParseDuration("1.5")->count(), 1500);
  EXPECT_EQ(ParseDuration("2m")->count(), 120000);
  EXPECT_EQ(ParseDuration("8h")->count(), 8 * 3600 * 1000);
  EXPECT_FALSE(ParseDuration("-1s").ok());
  // Found by config_fuzz: a huge value overflowed the conversion to
  // milliseconds (undefined behaviour), and nan/inf passed the sign check.
  EXPECT_FALSE(ParseDuration(std::string(120, '6')).ok());
  EXPECT_FALSE(ParseDuration("nan").ok());
  EXPECT_FALSE(ParseDuration("inf").ok());
  EXPECT_EQ(ParseDuration("8760h")->count(), int64_t{8760} * 3600 * 1000);
}

}  // namespace
}  // namespace binrelay::cli

namespace binrelay::cli {
namespace {

// The documented sample must stay valid: every key in it is read and parses.
TEST(ServeConfigTest, DocumentedSampleParses) {
  auto ini = IniFile::Load(absl::StrCat(BINRELAY_SOURCE_DIR, "/conf/binrelay.cnf"));
  ASSERT_TRUE(ini.ok()) << ini.status();
  // The sample points at password files that exist only on a real host.
  // A name of this process's own: a fixed /tmp/pw may be anything on a
  // shared machine (a directory left by some other tool failed this test).
  std::string pw = absl::StrCat(::testing::TempDir(), "/binrelay-sample-pw-", getpid());
  std::ofstream(pw) << "secret\n";
  ASSERT_TRUE(ini->Override("--source.password_file=" + pw).ok());
  ASSERT_TRUE(ini->Override("--listen.password_file=" + pw).ok());
  ASSERT_TRUE(ini->Override("--apply.orders.target_password_file=" + pw).ok());
  ASSERT_TRUE(ini->Override("--move.archive.target_password_file=" + pw).ok());
  auto c = ParseServeConfig(*ini);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->apply.size(), 1u);
  EXPECT_EQ(c->apply[0].name, "orders");
  EXPECT_EQ(c->apply[0].tables, "shop.orders, shop.order_items");
  EXPECT_EQ(c->apply[0].target.password, "secret");
  EXPECT_EQ(c->upstream.connect.password, "secret");
  EXPECT_EQ(c->store.sync, ServeConfig::Store::Sync::kTransaction);
  EXPECT_TRUE(c->http.enabled);
  ASSERT_EQ(c->moves.size(), 1u);
  EXPECT_EQ(c->moves[0].apply.name, "archive");
  // An empty password file is reported by key.
  std::string empty = absl::StrCat(::testing::TempDir(), "/binrelay-sample-empty-", getpid());
  std::ofstream(empty) << "";
  ASSERT_TRUE(ini->Override("--listen.password_file=" + empty).ok());
  auto bad = ParseServeConfig(*ini);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "[listen] password_file")) << bad.status();
  std::remove(pw.c_str());
  std::remove(empty.c_str());
}

}  // namespace
}  // namespace binrelay::cli

namespace binrelay::cli {
namespace {

// Guards: [apply.NAME] sections ignored or read with the wrong defaults, a
// typo in one accepted, a gtid: start refused or a malformed start accepted,
// and --apply.NAME.key overrides going to a section called "apply".
TEST(ServeConfigTest, ApplySectionsWithDefaultsAndOverrides) {
  const std::string base = std::string(kGood) +
                           "[apply.eu-orders]\ntarget_host = db2\ntarget_user = app\n"
                           "target_password = pw\ntables = shop.*\n";
  auto c = Parse(base, {"--apply.eu-orders.batch_rows=50"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->apply.size(), 1u);
  const apply::PipelineOptions& p = c->apply[0];
  EXPECT_EQ(p.name, "eu_orders") << "section names normalise as keys do";
  EXPECT_EQ(p.target.host, "db2");
  EXPECT_EQ(p.target.port, 3306);
  EXPECT_EQ(p.batch_rows, 50u);
  EXPECT_EQ(p.batch_bytes, 1u << 20);
  EXPECT_EQ(p.concurrency, 8u);
  EXPECT_EQ(p.soft_limit_bytes, 256u << 20);
  EXPECT_EQ(p.flush_interval.count(), 1000);
  EXPECT_EQ(p.checkpoint_schema, "binrelay");
  EXPECT_EQ(p.start.kind, replication::StartSpec::Kind::kCurrent);
  EXPECT_TRUE(p.bulk_replace);
  auto text = Parse(base + "bulk_replace = off\n");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_FALSE(text->apply[0].bulk_replace);
  auto bad_bulk = Parse(base + "bulk_replace = maybe\n");
  ASSERT_FALSE(bad_bulk.ok());
  EXPECT_TRUE(absl::StrContains(bad_bulk.status().message(), "bulk_replace")) << bad_bulk.status();
  auto typo = Parse(base + "batch_row = 5\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_TRUE(absl::StrContains(typo.status().message(), "batch_row")) << typo.status();
  auto gtid = Parse(base + "start = gtid:0-1-5\n");
  ASSERT_TRUE(gtid.ok()) << gtid.status();
  EXPECT_EQ(gtid->apply[0].start.kind, replication::StartSpec::Kind::kGtid);
  EXPECT_EQ(gtid->apply[0].start.gtid_set, "0-1-5");
  auto bad_gtid = Parse(base + "start = gtid:zero-one\n");
  ASSERT_FALSE(bad_gtid.ok());
  EXPECT_TRUE(absl::StrContains(bad_gtid.status().message(), "MariaDB GTID position"))
      << bad_gtid.status();
  auto bad_start = Parse(base + "start = mysql-bin.000001\n");
  ASSERT_FALSE(bad_start.ok());
  EXPECT_TRUE(absl::StrContains(bad_start.status().message(), "[apply.eu_orders] start"))
      << bad_start.status();
  auto missing = Parse(std::string(kGood) + "[apply.x]\ntarget_host = db2\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "target_user")) << missing.status();
}

}  // namespace
}  // namespace binrelay::cli

namespace binrelay::cli {
namespace {

// Guards: [move.NAME] keys ignored or read with the wrong defaults, a start
// key accepted for a move (it has none: it starts where its copy begins),
// a bad cutover mode accepted, and a move sharing a pipeline's name (they
// share the checkpoint table on the target).
TEST(ServeConfigTest, MoveSectionsWithDefaultsAndErrors) {
  const std::string base = std::string(kGood) +
                           "[move.arch]\ntarget_host = db3\ntarget_user = mover\n"
                           "target_password = pw\ntables = shop.archive\n";
  auto c = Parse(base, {"--move.arch.copy_threads=4"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->moves.size(), 1u);
  const apply::MoveOptions& m = c->moves[0];
  EXPECT_EQ(m.apply.name, "arch");
  EXPECT_EQ(m.apply.target.host, "db3");
  EXPECT_EQ(m.apply.tables, "shop.archive");
  EXPECT_EQ(m.copy_threads, 4u);
  EXPECT_EQ(m.cutover, apply::MoveOptions::Cutover::kAuto);
  EXPECT_EQ(m.chunk_time.count(), 1000);
  EXPECT_EQ(m.cutover_lock_wait.count(), 2000);
  EXPECT_EQ(m.cutover_timeout.count(), 5000);
  EXPECT_TRUE(m.rename_source);
  EXPECT_TRUE(m.bulk_copy);
  auto manual = Parse(base + "cutover = manual\nchunk_time = 250ms\nrename_source = off\n"
                             "bulk_copy = off\n");
  ASSERT_TRUE(manual.ok()) << manual.status();
  EXPECT_EQ(manual->moves[0].cutover, apply::MoveOptions::Cutover::kManual);
  EXPECT_EQ(manual->moves[0].chunk_time.count(), 250);
  EXPECT_FALSE(manual->moves[0].rename_source);
  EXPECT_FALSE(manual->moves[0].bulk_copy);
  auto bad = Parse(base + "cutover = later\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "[move.arch] cutover")) << bad.status();
  auto start = Parse(base + "start = current\n");
  ASSERT_FALSE(start.ok());
  EXPECT_TRUE(absl::StrContains(start.status().message(), "start")) << start.status();
  auto clash = Parse(base + "[apply.arch]\ntarget_host = db2\ntarget_user = app\n"
                            "target_password = pw\ntables = shop.*\n");
  ASSERT_FALSE(clash.ok());
  EXPECT_TRUE(absl::StrContains(clash.status().message(), "own name")) << clash.status();
}

// The `binrelay move` sample parses: [listen] is optional there, [move] is
// the one move and `name` names it.
TEST(ServeConfigTest, MoveSampleParsesWithoutAListener) {
  auto ini = IniFile::Load(absl::StrCat(BINRELAY_SOURCE_DIR, "/conf/move.cnf"));
  ASSERT_TRUE(ini.ok()) << ini.status();
  std::string pw = absl::StrCat(::testing::TempDir(), "/binrelay-move-pw-", getpid());
  std::ofstream(pw) << "secret\n";
  ASSERT_TRUE(ini->Override("--source.password_file=" + pw).ok());
  ASSERT_TRUE(ini->Override("--move.target_password_file=" + pw).ok());
  auto c = ParseMoveConfig(*ini);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->listen.enabled);
  ASSERT_EQ(c->moves.size(), 1u);
  EXPECT_EQ(c->moves[0].apply.name, "archive");
  EXPECT_EQ(c->moves[0].apply.target.password, "secret");
  EXPECT_EQ(c->moves[0].apply.tables, "shop.archive_orders, shop.archive_items");
  std::remove(pw.c_str());
}

// A minimal `binrelay move` configuration: [source], [store], [move].
constexpr char kMove[] = R"(
[source]
host = db1.example
user = mover
password = pw
server_id = 4002
[store]
dir = /var/lib/binrelay-move
[move]
target_host = db3.example
target_user = mover
target_password = pw
tables = shop.orders
)";

// Guards `[source] start = next`: taken only when asked (it runs FLUSH
// BINARY LOGS on the source), by serve and by a move alike; it still
// resolves to start = current, the fallback when the rotation cannot be
// done; and an unknown value names the choices.
TEST(ServeConfigTest, StartNextIsTakenOnlyWhenAsked) {
  auto serve = Parse(absl::StrReplaceAll(kGood, {{"start = mysql-bin.000042:4", ""}}));
  ASSERT_TRUE(serve.ok()) << serve.status();
  EXPECT_FALSE(serve->start_next);
  EXPECT_EQ(serve->upstream.start.kind, replication::StartSpec::Kind::kCurrent);

  auto next = Parse(absl::StrReplaceAll(kGood, {{"start = mysql-bin.000042:4", "start = next"}}));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->start_next);
  EXPECT_EQ(next->upstream.start.kind, replication::StartSpec::Kind::kCurrent);

  auto bad = Parse(absl::StrReplaceAll(kGood, {{"start = mysql-bin.000042:4", "start = newest"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "current, next, earliest"))
      << bad.status();

  for (bool asked : {false, true}) {
    std::string text = kMove;
    if (asked) {
      text = absl::StrReplaceAll(text, {{"server_id = 4002\n", "server_id = 4002\nstart = next\n"}});
    }
    auto ini = IniFile::Parse(text, "move.cnf");
    ASSERT_TRUE(ini.ok()) << ini.status();
    auto move = ParseMoveConfig(*ini);
    ASSERT_TRUE(move.ok()) << move.status();
    EXPECT_EQ(move->start_next, asked);
    EXPECT_EQ(move->upstream.start.kind, replication::StartSpec::Kind::kCurrent);
  }
}

// Guards the move's store default: `binrelay move` syncs its store every
// 100 ms (its readers only get synced events; an fdatasync per transaction
// cost the move CPU for nothing), serve keeps one per transaction, a move
// with semi_sync = on gets the per-transaction sync its ACKs promise, and
// a sync the operator set is kept.
TEST(ServeConfigTest, MoveStoreSyncsEvery100msUnlessSemiSyncOrSet) {
  auto parse = [&](std::vector<std::string> overrides) {
    auto ini = IniFile::Parse(kMove, "move.cnf");
    EXPECT_TRUE(ini.ok()) << ini.status();
    for (const std::string& o : overrides) EXPECT_TRUE(ini->Override(o).ok()) << o;
    return ParseMoveConfig(*ini);
  };
  auto plain = parse({});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->store.sync, ServeConfig::Store::Sync::kInterval);
  EXPECT_EQ(plain->store.sync_interval.count(), 100);
  auto semi = parse({"--source.semi_sync=on"});
  ASSERT_TRUE(semi.ok()) << semi.status();
  EXPECT_EQ(semi->store.sync, ServeConfig::Store::Sync::kTransaction);
  auto set = parse({"--store.sync=transaction"});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->store.sync, ServeConfig::Store::Sync::kTransaction);
  auto off = parse({"--store.sync=off"});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->store.sync, ServeConfig::Store::Sync::kOff);
  auto serve = Parse(absl::StrReplaceAll(kGood, {{"sync = 100ms\n", ""}}));
  ASSERT_TRUE(serve.ok()) << serve.status();
  EXPECT_EQ(serve->store.sync, ServeConfig::Store::Sync::kTransaction);
}

// Guards the RSA key options of caching_sha2_password: a pinned key file is
// read and checked at start (a file that holds no public key is refused,
// naming the key), and get_server_public_key reaches the connection.
TEST(ServeConfigTest, ServerPublicKeyIsPinnedFromItsFile) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_RSA_gen(2048), EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  const std::string pem(data, n);
  char dir_template[] = "/tmp/binrelay_cfg_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/source.pem") << pem;
  std::ofstream(dir + "/junk.pem") << "-----BEGIN NOTHING-----\n";

  std::string text = kGood;
  text.replace(text.find("ssl_mode = required"), 19,
               "ssl_mode = disabled\nserver_public_key_path = " + dir + "/source.pem");
  auto c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->upstream.connect.rsa.pinned_pem, pem);
  EXPECT_FALSE(c->upstream.connect.rsa.allow_retrieval);

  auto open = Parse(kGood, {"--source.get_server_public_key=on"});
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_TRUE(open->upstream.connect.rsa.allow_retrieval);
  EXPECT_TRUE(open->upstream.connect.rsa.pinned_pem.empty());

  text = kGood;
  text.replace(text.find("ssl_mode = required"), 19,
               "server_public_key_path = " + dir + "/junk.pem");
  auto bad = Parse(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "[source] server_public_key_path"))
      << bad.status();
  std::remove((dir + "/source.pem").c_str());
  std::remove((dir + "/junk.pem").c_str());
  rmdir(dir.c_str());
}

// Guards the start-up warning for secrets others can read: a config holding
// a password inline, or a password file, readable by group or others is
// named with its mode and the fix; the same files at 0600 are not.
TEST(ServeConfigTest, PasswordFilesReadableByOthersAreWarnedAbout) {
  char dir_template[] = "/tmp/binrelay_perm_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string cnf = dir + "/binrelay.cnf", pw = dir + "/listen.password";
  std::ofstream(pw) << "r3pl\n";
  std::string text = kGood;
  text.replace(text.find("password = r3pl"), 15, "password_file = " + pw);
  std::ofstream(cnf) << text;  // still holds [source] password inline

  ::chmod(cnf.c_str(), 0644);
  ::chmod(pw.c_str(), 0640);
  auto ini = IniFile::Load(cnf);
  ASSERT_TRUE(ini.ok()) << ini.status();
  auto c = ParseServeConfig(*ini);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->warnings.size(), 2u) << absl::StrJoin(c->warnings, "\n");
  const std::string all = absl::StrJoin(c->warnings, "\n");
  EXPECT_TRUE(absl::StrContains(all, cnf + " holds [source] password")) << all;
  EXPECT_TRUE(absl::StrContains(all, "(mode 0644): chmod 600 " + cnf)) << all;
  EXPECT_TRUE(absl::StrContains(all, pw + " holds [listen] password_file")) << all;
  EXPECT_TRUE(absl::StrContains(all, "(mode 0640)")) << all;
  EXPECT_FALSE(absl::StrContains(all, "s3cret")) << "a warning shows the password";

  ::chmod(cnf.c_str(), 0600);
  ::chmod(pw.c_str(), 0600);
  ini = IniFile::Load(cnf);
  ASSERT_TRUE(ini.ok()) << ini.status();
  c = ParseServeConfig(*ini);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->warnings.empty()) << absl::StrJoin(c->warnings, "\n");
  std::remove(cnf.c_str());
  std::remove(pw.c_str());
  rmdir(dir.c_str());
}

// Guards [listen] ssl_mode: required without a certificate cannot work and
// is refused at start; required with one reaches the listener's settings.
// TLS is offered by default (a generated certificate when none is named);
// required refuses plain logins, with or without a configured certificate;
// disabled offers none and contradicts a configured certificate.
TEST(ServeConfigTest, ListenSslModes) {
  auto plain = Parse(kGood);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->listen.ssl_enabled);
  EXPECT_FALSE(plain->listen.ssl_required);
  auto bare = Parse(kGood, {"--listen.ssl_mode=required"});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->listen.ssl_required);
  auto with = Parse(kGood, {"--listen.ssl_mode=required", "--listen.ssl_cert=/c.pem",
                            "--listen.ssl_key=/k.pem"});
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_TRUE(with->listen.ssl_required);
  auto off = Parse(kGood, {"--listen.ssl_mode=disabled"});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->listen.ssl_enabled);
  auto contradiction = Parse(kGood, {"--listen.ssl_mode=disabled", "--listen.ssl_cert=/c.pem",
                                     "--listen.ssl_key=/k.pem"});
  ASSERT_FALSE(contradiction.ok());
  EXPECT_TRUE(absl::StrContains(contradiction.status().message(), "[listen] ssl_mode"))
      << contradiction.status();
  EXPECT_FALSE(Parse(kGood, {"--listen.ssl_mode=sometimes"}).ok());
  auto rsa = Parse(kGood, {"--listen.rsa_private_key=/k.pem"});
  ASSERT_TRUE(rsa.ok()) << rsa.status();
  EXPECT_EQ(rsa->listen.rsa_private_key, "/k.pem");
}

// Guards ssl_mode verify_ca against verify_identity (MySQL's meanings): both
// require TLS and a CA file; only verify_identity checks the host name.
TEST(ServeConfigTest, VerifyCaAndVerifyIdentityDifferInTheHostCheck) {
  auto ca = Parse(kGood, {"--source.ssl_mode=verify_ca", "--source.ssl_ca=/ca.pem"});
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_EQ(ca->upstream.connect.tls, protocol::ConnectOptions::Tls::kRequired);
  EXPECT_FALSE(ca->upstream.connect.tls_verify_identity);
  auto id = Parse(kGood, {"--source.ssl_mode=verify_identity", "--source.ssl_ca=/ca.pem"});
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(id->upstream.connect.tls_verify_identity);
  auto no_ca = Parse(kGood, {"--source.ssl_mode=verify_identity"});
  ASSERT_FALSE(no_ca.ok());
  EXPECT_TRUE(absl::StrContains(no_ca.status().message(), "ssl_ca")) << no_ca.status();
}

// Guards "passwords never appear in error messages": a malformed override
// carrying a password is reported without its value.
TEST(ServeConfigTest, MalformedPasswordOverrideIsReportedWithoutTheValue) {
  for (const char* flag : {"--sourcepassword=hunter2", "source.password=hunter2",
                           "--.password=hunter2"}) {
    auto c = Parse(kGood, {flag});
    ASSERT_FALSE(c.ok()) << flag;
    EXPECT_FALSE(absl::StrContains(c.status().message(), "hunter2")) << c.status();
    EXPECT_TRUE(absl::StrContains(c.status().message(), "=...")) << c.status();
  }
}

// Guards "passwords never appear in error messages" and ps: a password given
// as an override is refused (like tail's --password), and a config line that
// is malformed or misplaced is reported by file:line and key, never quoted.
TEST(ServeConfigTest, PasswordsOnTheCommandLineOrInBadLinesAreNeverEchoed) {
  for (const char* flag : {"--source.password=hunter2", "--listen.admin_password=hunter2",
                           "--apply.orders.target_password=hunter2", "-phunter2",
                           "--source.pass hunter2=x"}) {
    auto c = Parse(kGood, {flag});
    ASSERT_FALSE(c.ok()) << flag;
    EXPECT_FALSE(absl::StrContains(c.status().message(), "hunter2")) << c.status();
  }
  auto refused = Parse(kGood, {"--source.password=hunter2"});
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "password_file")) << refused.status();
  for (const char* text : {"password = hunter2\n[source]\n", "[source]\npassword hunter2\n",
                           "[source]\npassword: hunter2\n", "[source hunter2\n",
                           "[source]\npassword hunter2==\n", "pass hunter2=x\n[source]\n"}) {
    auto ini = IniFile::Parse(text, "binrelay.cnf");
    ASSERT_FALSE(ini.ok()) << text;
    EXPECT_FALSE(absl::StrContains(ini.status().message(), "hunter2")) << ini.status();
    EXPECT_TRUE(absl::StrContains(ini.status().message(), "binrelay.cnf:")) << ini.status();
  }
  EXPECT_EQ(ShownArgument("-phunter2"), "-p...");
  EXPECT_EQ(ShownArgument("--passwd=hunter2"), "--passwd=...");
  EXPECT_EQ(ShownArgument("--config"), "--config");
}

// Guards the semi-sync promise: an ACK means the transaction is on
// binrelay's disk, which only [store] sync = transaction gives.
TEST(ServeConfigTest, SemiSyncNeedsTheStoreToSyncEveryTransaction) {
  auto interval = Parse(kGood, {"--source.semi_sync=on"});  // kGood: sync = 100ms
  ASSERT_FALSE(interval.ok());
  EXPECT_TRUE(absl::StrContains(interval.status().message(), "sync = transaction"))
      << interval.status();
  auto ok = Parse(kGood, {"--source.semi_sync=on", "--store.sync=transaction"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->upstream.semi_sync);
  EXPECT_FALSE(Parse(kGood)->upstream.semi_sync);
}

}  // namespace
}  // namespace binrelay::cli
