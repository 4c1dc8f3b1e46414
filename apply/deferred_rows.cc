#include "apply/deferred_rows.h"

#include <utility>

#include "apply/ordered_key.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"

namespace binrelay::apply {

void DeferredRows::Release(Held held, std::vector<const BufferedRow*>* out) {
  bytes_ -= held.image.size();
  released_.emplace_back(std::move(held.image), BufferedRow{});
  auto& [image, row] = released_.back();
  row.is_delete = held.is_delete;
  row.image = image;  // after the move: a short string's bytes move with it
  row.capacity = image.size();
  out->push_back(&row);
}

absl::Status DeferredRows::Sift(const ApplyTable& t, TableCopyGate& gate,
                                const std::vector<BufferedRow>* rows,
                                const replication::BinlogPosition& since,
                                std::vector<const BufferedRow*>* out) {
  auto found = tables_.find(&t);
  TableHeld* held = found == tables_.end() ? nullptr : &found->second;
  auto hold = [&]() -> TableHeld& {
    if (held == nullptr) {
      held = &tables_[&t];
      held->gate = &gate;
    }
    return *held;
  };
  if (!gate.exact_order()) {
    // Every change in binlog order: held ones first, and none of this
    // drain's may overtake one still held.
    const bool wait = gate.MustDefer({});
    if (held != nullptr && !wait) {
      while (!held->fifo.empty()) {
        Release(std::move(held->fifo.front()), out);
        held->fifo.pop_front();
      }
    }
    if (rows != nullptr) {
      if (wait) {
        TableHeld& h = hold();
        for (const BufferedRow& r : *rows) {
          h.fifo.push_back(Held{r.is_delete, std::string(r.image), since});
          bytes_ += r.image.size();
        }
      } else {
        for (const BufferedRow& r : *rows) out->push_back(&r);
      }
    }
  } else {
    if (rows != nullptr) {
      for (const BufferedRow& r : *rows) {
        BR_RETURN_IF_ERROR(EncodeOrderedKey(r.image, t.def, t.def.primary_key, &scratch_, &key_));
        if (held != nullptr) {
          // This drain's change is the later one.
          if (auto it = held->keyed.find(key_); it != held->keyed.end()) {
            bytes_ -= it->second.image.size();
            held->keyed.erase(it);
          }
        }
        if (gate.MustDefer(key_)) {
          hold().keyed.emplace(key_, Held{r.is_delete, std::string(r.image), since});
          bytes_ += r.image.size();
        } else {
          out->push_back(&r);
        }
      }
    }
    if (held != nullptr) {
      for (auto it = held->keyed.begin(); it != held->keyed.end();) {
        if (gate.MustDefer(it->first)) {
          ++it;
          continue;
        }
        Release(std::move(it->second), out);
        held->keyed.erase(it++);
      }
    }
  }
  if (held != nullptr && held->keyed.empty() && held->fifo.empty()) tables_.erase(&t);
  return absl::OkStatus();
}

std::vector<std::pair<const ApplyTable*, TableCopyGate*>> DeferredRows::tables() const {
  std::vector<std::pair<const ApplyTable*, TableCopyGate*>> out;
  for (const auto& [t, held] : tables_) out.emplace_back(t, held.gate);
  return out;
}

std::optional<replication::BinlogPosition> DeferredRows::floor() const {
  std::optional<replication::BinlogPosition> f;
  auto take = [&](const Held& h) {
    if (!f || replication::PositionBefore(h.since, *f)) f = h.since;
  };
  for (const auto& [t, held] : tables_) {
    for (const auto& [key, h] : held.keyed) take(h);
    if (!held.fifo.empty()) take(held.fifo.front());  // binlog order: the earliest
  }
  return f;
}

size_t DeferredRows::rows() const {
  size_t n = 0;
  for (const auto& [t, held] : tables_) n += held.keyed.size() + held.fifo.size();
  return n;
}

size_t DeferredRows::rows(const ApplyTable* t) const {
  auto it = tables_.find(t);
  return it == tables_.end() ? 0 : it->second.keyed.size() + it->second.fifo.size();
}

}  // namespace binrelay::apply
