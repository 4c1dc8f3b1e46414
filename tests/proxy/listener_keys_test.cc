#include "proxy/listener_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "proxy/listener.h"
#include "proxy/rsa_key_pair.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::proxy {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 0777;
}

class ListenerKeysTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestTempDir("listener_keys") + "/.tls"; }
  void TearDown() override { fs::remove_all(fs::path(dir_).parent_path()); }
  std::string dir_;
};

// Guards: TLS not offered by default (no certificate unless configured), a
// key readable by others, and keys regenerated at every start (clients that
// pinned the certificate or public key would break at each restart).
TEST_F(ListenerKeysTest, GeneratesUsableKeysOnceAndReusesThem) {
  BR_ASSERT_OK_AND_ASSIGN(ListenerKeyFiles keys, EnsureListenerKeys(dir_, {}, true));
  EXPECT_EQ(keys.ssl_cert, dir_ + "/server-cert.pem");
  EXPECT_EQ(keys.ssl_key, dir_ + "/server-key.pem");
  EXPECT_EQ(keys.rsa_private_key, dir_ + "/private_key.pem");
  EXPECT_EQ(Mode(keys.ssl_key), 0600u);
  EXPECT_EQ(Mode(keys.rsa_private_key), 0600u);
  BR_EXPECT_OK(MakeServerTlsContext(keys.ssl_cert, keys.ssl_key).status());
  BR_ASSERT_OK_AND_ASSIGN(std::string fp, CertificateSha256(keys.ssl_cert));
  EXPECT_EQ(fp.size(), 32u);
  BR_ASSERT_OK_AND_ASSIGN(auto rsa, RsaKeyPair::FromPrivateKeyFile(keys.rsa_private_key));
  EXPECT_EQ(Read(dir_ + "/public_key.pem"), rsa->public_pem());
  EXPECT_TRUE(absl::StrContains(rsa->public_pem(), "BEGIN PUBLIC KEY"));

  const std::string cert = Read(keys.ssl_cert), key = Read(keys.rsa_private_key);
  BR_ASSERT_OK_AND_ASSIGN(ListenerKeyFiles again, EnsureListenerKeys(dir_, {}, true));
  EXPECT_EQ(Read(again.ssl_cert), cert);
  EXPECT_EQ(Read(again.rsa_private_key), key);
}

// Configured files are used as they are; TLS off generates no certificate.
TEST_F(ListenerKeysTest, ConfiguredFilesWinAndTlsOffGeneratesNoCertificate) {
  BR_ASSERT_OK_AND_ASSIGN(ListenerKeyFiles mine,
                          EnsureListenerKeys(dir_, {"/etc/c.pem", "/etc/k.pem", "/etc/r.pem"},
                                             true));
  EXPECT_EQ(mine.ssl_cert, "/etc/c.pem");
  EXPECT_EQ(mine.rsa_private_key, "/etc/r.pem");
  EXPECT_FALSE(fs::exists(dir_));
  BR_ASSERT_OK_AND_ASSIGN(ListenerKeyFiles off, EnsureListenerKeys(dir_, {}, false));
  EXPECT_TRUE(off.ssl_cert.empty());
  EXPECT_FALSE(fs::exists(dir_ + "/server-cert.pem"));
  EXPECT_TRUE(fs::exists(off.rsa_private_key));
}

// A certificate left without its key (or the reverse) is not silently
// replaced: the error names the file to delete.
TEST_F(ListenerKeysTest, HalfAPairIsAnErrorNamingTheFile) {
  BR_ASSERT_OK(EnsureListenerKeys(dir_, {}, true).status());
  fs::remove(dir_ + "/server-key.pem");
  absl::StatusOr<ListenerKeyFiles> r = EnsureListenerKeys(dir_, {}, true);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), dir_ + "/server-cert.pem"))
      << r.status();
}

// A file that is no RSA key is refused with its name, never used.
TEST_F(ListenerKeysTest, RsaKeyFileThatIsNoKeyIsRefused) {
  fs::create_directories(dir_);
  std::ofstream(dir_ + "/bad.pem") << "not a key";
  absl::StatusOr<std::shared_ptr<const RsaKeyPair>> r =
      RsaKeyPair::FromPrivateKeyFile(dir_ + "/bad.pem");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), dir_ + "/bad.pem")) << r.status();
}

}  // namespace
}  // namespace binrelay::proxy
