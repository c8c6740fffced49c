#include <catch2/catch.hpp>

#include <fstream>

#include "ntp_format.h"
#include "ntp_reader.h"
#include "ntp_writer.h"
#include "recording_writer.h"
#include "temp_dir.h"

using namespace ntprof;
using namespace ntprof::testing;

namespace {

CommandTiming Fixed(int) { return {300, 800, 470, 200, 10'000, 200, 300, 60'000, 210, 300}; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string OpenError(const std::string& path, NtpReadOptions options = {}) {
  auto reader = NtpReader::Open(path, options);
  if (!reader.ok()) return std::string(reader.status().message());
  v1::RecordBatch batch;
  while (true) {
    auto more = (*reader)->Next(&batch);
    if (!more.ok()) return std::string(more.status().message());
    if (!*more) return "";
  }
}

}  // namespace

TEST_CASE("ntp_file_round_trips_header_batches_and_trailer", "[ntp]") {
  TempDir dir;
  RunSpec spec{.commands = 100, .batch = 16};
  WriteRun(dir.File("host.ntp"), "", spec, Fixed);
  auto reader = NtpReader::Open(dir.File("host.ntp"));
  REQUIRE(reader.ok());
  CHECK((*reader)->header().hostname() == "host");
  CHECK((*reader)->header().sample_rate() == 10);
  CHECK((*reader)->header().salt() == 42);
  CHECK((*reader)->header().role() == v1::ROLE_HOST);
  v1::RecordBatch batch;
  int batches = 0, records = 0;
  while (*(*reader)->Next(&batch)) {
    ++batches;
    records += batch.records_size();
    REQUIRE(batch.records(0).stamps_size() == NTPROF_HOST_STAMPS);
  }
  CHECK(batches == 7);  // 6 x 16 + 4
  CHECK(records == 100);
  CHECK((*reader)->finalized());
  CHECK((*reader)->trailer().records() == 100);
}

TEST_CASE("ntp_reader_refuses_bad_files_with_a_message_naming_the_problem", "[ntp]") {
  TempDir dir;
  const std::string good = dir.File("good.ntp");
  WriteRun(good, "", RunSpec{.commands = 40, .batch = 8}, Fixed);
  const std::string bytes = ReadAll(good);
  const std::string bad = dir.File("bad.ntp");

  SECTION("empty") {
    WriteAll(bad, "");
    CHECK_THAT(OpenError(bad), Catch::Contains(bad) && Catch::Contains("empty file"));
  }
  SECTION("wrong magic") {
    WriteAll(bad, "hello world, this is not a recording");
    CHECK_THAT(OpenError(bad), Catch::Contains("wrong magic"));
  }
  SECTION("newer format version") {
    std::string newer = bytes;
    ntp::PutU32(newer.data() + 8, ntp::kFormatVersion + 1);
    WriteAll(bad, newer);
    CHECK_THAT(OpenError(bad), Catch::Contains("newer than this ntprof reads"));
  }
  SECTION("garbage after the magic is corrupt, not a newer version") {
    std::string garbage = bytes;
    ntp::PutU32(garbage.data() + 8, 0x7dbc02b0u);  // 2109473456, as reported from the field
    WriteAll(bad, garbage);
    CHECK_THAT(OpenError(bad), Catch::Contains("corrupt file header") &&
                                   Catch::Contains("2109473456") && !Catch::Contains("upgrade"));
  }
  SECTION("the newest plausible version still asks for an upgrade") {
    std::string newer = bytes;
    ntp::PutU32(newer.data() + 8, ntp::kNewestPlausibleFormatVersion);
    WriteAll(bad, newer);
    CHECK_THAT(OpenError(bad), Catch::Contains("upgrade ntprof"));
  }
  SECTION("truncated in the header") {
    WriteAll(bad, bytes.substr(0, 30));
    CHECK_THAT(OpenError(bad), Catch::Contains("truncated inside the file header"));
  }
  SECTION("truncated mid-batch") {
    WriteAll(bad, bytes.substr(0, bytes.size() - 100));
    CHECK_THAT(OpenError(bad), Catch::Contains("truncated") && Catch::Contains("--salvage"));
  }
  SECTION("flipped byte in a batch") {
    std::string corrupt = bytes;
    corrupt[corrupt.size() / 2] ^= 0x5a;
    WriteAll(bad, corrupt);
    CHECK_THAT(OpenError(bad), Catch::Contains("checksum mismatch"));
  }
  SECTION("absurd frame length") {
    std::string corrupt = bytes;
    const uint32_t header_len = ntp::GetU32(bytes.data() + 12);
    ntp::PutU32(corrupt.data() + ntp::kPreambleBytes + header_len + 4, 0xfffffff0u);
    WriteAll(bad, corrupt);
    CHECK_THAT(OpenError(bad), Catch::Contains("corrupt frame"));
  }
  SECTION("missing file") {
    CHECK_THAT(OpenError(dir.File("nope.ntp")), Catch::Contains("cannot open"));
  }
}

TEST_CASE("ntp_reader_salvages_the_intact_batches_of_a_truncated_file", "[ntp]") {
  TempDir dir;
  const std::string path = dir.File("cut.ntp");
  WriteRun(path, "", RunSpec{.commands = 40, .batch = 8}, Fixed);
  std::string bytes = ReadAll(path);
  WriteAll(path, bytes.substr(0, bytes.size() - 100));  // trailer and part of the last batch gone
  auto reader = NtpReader::Open(path, {.salvage = true});
  REQUIRE(reader.ok());
  v1::RecordBatch batch;
  int records = 0;
  while (*(*reader)->Next(&batch)) records += batch.records_size();
  CHECK(records == 32);
  CHECK((*reader)->salvaged());
  CHECK_FALSE((*reader)->finalized());
}

TEST_CASE("ntp_file_of_a_killed_writer_reads_to_its_last_batch", "[ntp]") {
  TempDir dir;
  const std::string path = dir.File("killed.ntp");
  {
    auto writer = NtpWriter::Create(path, Header(RunSpec{}, v1::ROLE_HOST));
    REQUIRE(writer.ok());
    v1::RecordBatch batch;
    *batch.add_records() = MakeRecord(v1::ROLE_HOST, {}, HostStamps(1, 1, 1, 1, 1, 1), "nvme0n1");
    REQUIRE((*writer)->WriteBatch(batch).ok());
    // no Finalize: as after SIGKILL
  }
  auto reader = NtpReader::Open(path);
  REQUIRE(reader.ok());
  v1::RecordBatch batch;
  REQUIRE(*(*reader)->Next(&batch));
  CHECK(batch.records_size() == 1);
  CHECK_FALSE(*(*reader)->Next(&batch));
  CHECK_FALSE((*reader)->finalized());
}

TEST_CASE("ntp_reader_streams_many_batches_without_holding_them", "[ntp]") {
  TempDir dir;
  const std::string path = dir.File("big.ntp");
  RunSpec spec{.commands = 200'000, .batch = 512};
  WriteRun(path, "", spec, Fixed);
  auto reader = NtpReader::Open(path);
  REQUIRE(reader.ok());
  v1::RecordBatch batch;
  uint64_t records = 0;
  size_t largest_batch = 0;
  while (*(*reader)->Next(&batch)) {
    records += static_cast<uint64_t>(batch.records_size());
    largest_batch = std::max(largest_batch, static_cast<size_t>(batch.records_size()));
    batch.Clear();
  }
  CHECK(records == 200'000);
  CHECK(largest_batch == 512);  // one batch in memory at a time
}

TEST_CASE("ntp_reader_survives_every_truncation_and_every_flipped_byte", "[ntp]") {
  // Exhaustive over a small recording: every prefix, and every byte flipped, must either read or
  // fail with a message naming the file; never crash, hang or throw.
  TempDir dir;
  const std::string good = dir.File("good.ntp");
  WriteRun(good, "", RunSpec{.commands = 6, .batch = 3}, Fixed);
  const std::string bytes = ReadAll(good);
  const std::string bad = dir.File("bad.ntp");
  size_t errors = 0;
  auto read_all = [&] {
    const std::string message = OpenError(bad);
    if (!message.empty()) {
      ++errors;
      REQUIRE_THAT(message, Catch::StartsWith(bad + ": "));
    }
  };
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    WriteAll(bad, bytes.substr(0, cut));
    read_all();
  }
  const size_t truncation_errors = errors;
  // Prefixes that end on a frame boundary are what a killed writer leaves: readable, unfinalized.
  // Here: after the header, after batch 1, after batch 2. Every other prefix is an error.
  CHECK(truncation_errors == bytes.size() - 3);
  errors = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0xff);
    WriteAll(bad, flipped);
    read_all();
  }
  CHECK(errors == bytes.size());  // every byte is covered by the magic, a length or a checksum
}
