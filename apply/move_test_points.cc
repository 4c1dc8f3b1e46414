#include "apply/move_test_points.h"

#include <filesystem>
#include <utility>

#include "spdlog/spdlog.h"

namespace binrelay::apply {
namespace {

class FilePoints : public MoveTestPoints {
 public:
  FilePoints(std::string hold_dir, std::string stall_at)
      : hold_dir_(std::move(hold_dir)), stall_at_(std::move(stall_at)) {}

  bool Hold(std::string_view move, std::string_view point, bool always,
            const Wait& wait) override {
    if (hold_dir_.empty()) return true;
    const std::filesystem::path dir(hold_dir_);
    if (!always && !std::filesystem::exists(dir / std::string("hold ").append(point))) {
      return true;
    }
    spdlog::warn("move {}: held at {} (test_hold_dir)", move, point);
    const std::filesystem::path release = dir / std::string(point);
    while (!std::filesystem::exists(release)) {
      if (!wait(absl::Milliseconds(50))) return false;
    }
    spdlog::info("move {}: released at {}", move, point);
    return true;
  }

  bool Stall(std::string_view move, std::string_view point, const Wait& wait) override {
    if (stall_at_ != point) return true;
    spdlog::warn("move {}: stalled at {} (test_stall_at)", move, point);
    while (wait(absl::Milliseconds(100))) {
    }
    return false;
  }

 private:
  const std::string hold_dir_;
  const std::string stall_at_;
};

}  // namespace

std::shared_ptr<MoveTestPoints> FileMoveTestPoints(std::string hold_dir, std::string stall_at) {
  return std::make_shared<FilePoints>(std::move(hold_dir), std::move(stall_at));
}

}  // namespace binrelay::apply
