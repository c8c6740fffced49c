// SlotTable: the agent's view of a BPF in-flight slot table (bpf/ntprof_slots.h, layout in
// bpf/ntprof_maps.h) through an mmap of its array map. A sweep reads every slot in one pass with no
// system call per slot (a lookup per slot would be 16,384 calls each interval), and frees a slot
// with the same compare-and-swap of its key that the BPF programs use, so a command that completes
// while it is swept is counted once, by whichever side freed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "ntprof_maps.h"

namespace ntprof::agent {

// The shared mapping of an array map created with BPF_F_MMAPABLE; unmapped on destruction.
class MappedArray {
 public:
  static absl::StatusOr<MappedArray> Of(int map_fd);
  MappedArray(MappedArray&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)), bytes_(other.bytes_),
        value_size_(other.value_size_), entries_(other.entries_) {}
  MappedArray& operator=(MappedArray&& other) noexcept;
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  ~MappedArray();

  void* base() const { return base_; }
  size_t value_size() const { return value_size_; }
  uint32_t entries() const { return entries_; }

 private:
  MappedArray(void* base, size_t bytes, size_t value_size, uint32_t entries)
      : base_(base), bytes_(bytes), value_size_(value_size), entries_(entries) {}
  void* base_ = nullptr;
  size_t bytes_ = 0;
  size_t value_size_ = 0;
  uint32_t entries_ = 0;
};

// Slot: ntprof_record_slot or ntprof_index_slot (a u64 key first, 0 = free).
template <class Slot>
class SlotTable {
 public:
  static absl::StatusOr<SlotTable> Of(int map_fd) {
    auto mapped = MappedArray::Of(map_fd);
    if (!mapped.ok()) return mapped.status();
    if (mapped->value_size() != sizeof(Slot) || mapped->entries() != NTPROF_SLOTS)
      return absl::FailedPreconditionError("slot table has another layout than ntprof_maps.h");
    return SlotTable(std::move(*mapped));
  }

  // Calls fn(index, copy of the slot) for every slot in use.
  template <class Fn>
  void ForEachUsed(Fn&& fn) const {
    for (uint32_t i = 0; i < NTPROF_SLOTS; ++i) {
      if (LoadKey(i) == 0) continue;
      Slot copy = Slots()[i];
      if (copy.key != 0) fn(i, copy);
    }
  }

  // The slot holding key (the BPF side's probes), copied, or nullopt.
  std::optional<Slot> Find(uint64_t key) const {
    uint32_t home = ntprof_slot_home(static_cast<uint32_t>(key));
    for (uint32_t i = 0; i < NTPROF_SLOT_PROBES; ++i) {
      uint32_t index = (home + i) & (NTPROF_SLOTS - 1);
      if (LoadKey(index) == key) return Slots()[index];
    }
    return std::nullopt;
  }

  // Frees slot index if it still holds key: true when this call freed it.
  bool Release(uint32_t index, uint64_t key) {
    return __atomic_compare_exchange_n(&Slots()[index].key, &key, 0, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
  }

 private:
  explicit SlotTable(MappedArray mapped) : mapped_(std::move(mapped)) {}
  Slot* Slots() const { return static_cast<Slot*>(mapped_.base()); }
  // The BPF programs swap keys with cmpxchg on the same memory: read and swap them atomically.
  uint64_t LoadKey(uint32_t index) const {
    return __atomic_load_n(&Slots()[index].key, __ATOMIC_ACQUIRE);
  }

  MappedArray mapped_;
};

}  // namespace ntprof::agent
