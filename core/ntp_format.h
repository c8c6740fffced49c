// The on-disk layout of a .ntp recording (docs/design.md, "Recordings"), shared by NtpWriter and
// NtpReader.
//
//   magic[8] | u32 format_version | u32 header_len | u32 header_crc32 | FileHeader (protobuf)
//   frame*   : u32 kind | u32 payload_len | u32 payload_crc32 | payload (protobuf)
//
// Integers are little-endian. Each frame is written with one write(2), so a crash of the writer
// leaves every earlier frame intact; a cleanly closed file ends with a kTrailer frame.
#pragma once

#include <cstdint>
#include <string_view>

namespace ntprof::ntp {

inline constexpr std::string_view kMagic{"\x89NTPROF\n", 8};
inline constexpr uint32_t kFormatVersion = 1;
// The format changes a few times in ntprof's life, not thousands: a version beyond this is not a
// newer ntprof's file but whatever bytes follow the magic of a corrupt one.
inline constexpr uint32_t kNewestPlausibleFormatVersion = kFormatVersion + 1000;
inline constexpr uint32_t kPreambleBytes = 8 + 4 + 4 + 4;
inline constexpr uint32_t kFrameHeaderBytes = 4 + 4 + 4;
// Larger frames are refused: a corrupt length must not make the reader allocate gigabytes.
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;
inline constexpr uint32_t kMaxHeaderBytes = 1u << 20;

enum class FrameKind : uint32_t {
  kBatch = 1,    // ntprof.v1.RecordBatch
  kTrailer = 2,  // ntprof.v1.FileTrailer
};

inline void PutU32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

inline uint32_t GetU32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

uint32_t Crc32(std::string_view bytes);

}  // namespace ntprof::ntp
