// Sha2AuthCache: the accounts that completed caching_sha2_password full
// authentication since binrelay started, which may then log in with the fast
// scramble alone, as with mysqld (sql/auth/sha2_password.cc keeps
// SHA256(SHA256(password)) per account after a full authentication and
// forgets it at restart). binrelay knows the passwords; what the cache
// records is that the account proved its password in full once, so clients
// meet the same exchange as on the source: the first login of an account
// needs TLS or the RSA key, later ones do not.
//
// Thread safety: every method may be called from any connection.
#pragma once

#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {

class Sha2AuthCache {
 public:
  bool Contains(std::string_view user) const {
    absl::MutexLock l(&mu_);
    return users_.contains(AV(user));
  }
  void Add(std::string_view user) {
    absl::MutexLock l(&mu_);
    users_.emplace(user);
  }

 private:
  mutable absl::Mutex mu_;
  // At most the listener's two accounts: only a successful full
  // authentication adds one.
  absl::flat_hash_set<std::string> users_ ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::proxy
