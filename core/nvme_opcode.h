// nvme_opcode.h - the NVMe I/O opcodes ntprof treats apart.
#pragma once

#include <cstdint>

namespace ntprof {

// An NVMe read (0x02) or write (0x01): the commands with a data path, whose records carry every
// stage boundary of their transport. Flushes and the like have none of the storage's stamps.
inline bool IsReadOrWrite(uint32_t opcode) { return opcode == 0x01 || opcode == 0x02; }

}  // namespace ntprof
