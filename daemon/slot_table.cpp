#include "slot_table.h"

#include <bpf/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ntprof::agent {

absl::StatusOr<MappedArray> MappedArray::Of(int map_fd) {
  struct bpf_map_info info = {};
  uint32_t info_len = sizeof(info);
  if (map_fd < 0 || bpf_obj_get_info_by_fd(map_fd, &info, &info_len) != 0)
    return absl::NotFoundError("not a BPF map");
  if (info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE))
    return absl::FailedPreconditionError(std::string("map ") + info.name +
                                         " is not an mmapable array");
  // The kernel lays an mmapable array out at 8-byte aligned values, rounded up to whole pages.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t stride = (info.value_size + 7) / 8 * 8;
  const size_t bytes = (stride * info.max_entries + page - 1) / page * page;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (base == MAP_FAILED)
    return absl::InternalError(std::string("mmap of map ") + info.name + ": " +
                               std::strerror(errno));
  return MappedArray(base, bytes, info.value_size, info.max_entries);
}

MappedArray& MappedArray::operator=(MappedArray&& other) noexcept {
  if (this != &other) {
    if (base_) munmap(base_, bytes_);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = other.bytes_;
    value_size_ = other.value_size_;
    entries_ = other.entries_;
  }
  return *this;
}

MappedArray::~MappedArray() {
  if (base_) munmap(base_, bytes_);
}

}  // namespace ntprof::agent
