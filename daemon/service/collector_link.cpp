#include "collector_link.h"

#include <algorithm>
#include <chrono>

#include "spdlog/spdlog.h"

namespace ntprof::agent {
namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(200);
constexpr auto kMaxBackoff = std::chrono::seconds(5);
constexpr auto kWelcomeTimeout = std::chrono::seconds(10);
constexpr size_t kSendChunk = 64;

// The Connect stream with the agent's side as bytes: the spool holds each message in its wire
// form already, so the link sends the spooled bytes as they are. Decoding every record of a batch
// and encoding it again for gRPC cost more than the rest of the agent's work per record
// (docs/overhead.md, "The agent's work per record"). This is the call the generated stub makes,
// with grpc::ByteBuffer for the messages it writes.
using ConnectStream = grpc::ClientReaderWriter<grpc::ByteBuffer, v1::CollectorMessage>;

std::unique_ptr<ConnectStream> OpenConnect(grpc::Channel* channel, grpc::ClientContext* context) {
  static const std::string method = std::string("/") + v1::Collector::service_full_name() + "/Connect";
  return std::unique_ptr<ConnectStream>(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, v1::CollectorMessage>::Create(
          channel,
          grpc::internal::RpcMethod(method.c_str(), grpc::internal::RpcMethod::BIDI_STREAMING),
          context));
}

grpc::ByteBuffer WireBytes(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

CollectorLink::CollectorLink(std::string address, std::shared_ptr<grpc::Channel> channel,
                             Spool* spool, HelloFn hello, ControlFn control)
    : address_(std::move(address)),
      channel_(std::move(channel)),
      spool_(spool),
      hello_(std::move(hello)),
      control_(std::move(control)) {}

CollectorLink::~CollectorLink() { Stop(); }

void CollectorLink::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void CollectorLink::Stop() {
  if (stop_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (context_) context_->TryCancel();
    cv_.notify_all();
  }
  spool_->Wake();
  if (thread_.joinable()) thread_.join();
}

void CollectorLink::Loop() {
  auto backoff = std::chrono::duration_cast<std::chrono::milliseconds>(kFirstBackoff);
  bool warned = false;
  while (!stop_.load()) {
    if (RunStream()) {
      backoff = kFirstBackoff;
      warned = false;
    } else if (!warned) {
      spdlog::warn(
          "cannot reach the collector at {}; retrying every {} s at most (records wait "
          "in the spool)",
          address_, std::chrono::duration_cast<std::chrono::seconds>(kMaxBackoff).count());
      warned = true;
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, backoff, [&] { return stop_.load(); });
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
  }
}

bool CollectorLink::RunStream() {
  grpc::ClientContext context;
  {
    std::lock_guard lock(mu_);
    if (stop_.load()) return false;
    context_ = &context;
  }
  auto stream = OpenConnect(channel_.get(), &context);
  v1::AgentMessage hello;
  *hello.mutable_hello() = hello_();
  bool welcomed = false;
  uint64_t welcome_acked = 0;
  std::atomic<bool> broken{false};
  std::mutex welcome_mu;
  std::condition_variable welcome_cv;

  // Reads the Welcome, then acks and control until the stream ends.
  std::thread reader([&] {
    v1::CollectorMessage m;
    while (stream->Read(&m)) {
      if (m.has_welcome()) {
        spool_->Ack(m.welcome().acked_seq());
        std::lock_guard lock(welcome_mu);
        welcome_acked = m.welcome().acked_seq();
        welcomed = true;
        welcome_cv.notify_all();
      } else if (m.has_ack()) {
        spool_->Ack(m.ack().seq());
      } else {
        control_(m);
      }
    }
    broken = true;
    spool_->Wake();
    std::lock_guard lock(welcome_mu);
    welcome_cv.notify_all();
  });

  bool ok = stream->Write(WireBytes(hello.SerializeAsString()));
  if (ok) {
    std::unique_lock lock(welcome_mu);
    ok = welcome_cv.wait_for(lock, kWelcomeTimeout, [&] { return welcomed || broken.load(); }) &&
         welcomed;
  }
  if (ok) {
    // A collector that does not hold numbers an earlier one acked (a new collector, or its data
    // directory was lost): they are gone from the spool, so declare them, or its acks could never
    // move past the hole and the spool would never drain.
    const uint64_t held_from = spool_->FirstHeldSeq();
    if (welcome_acked + 1 < held_from) {
      v1::AgentMessage gap;
      gap.mutable_gap()->set_first(welcome_acked + 1);
      gap.mutable_gap()->set_last(held_from - 1);
      gap.mutable_gap()->set_reason(
          "acked by an earlier collector, not held by this one (new collector or data lost)");
      spdlog::warn(
          "the collector at {} holds up to seq {}, but {}..{} were acked before: "
          "declaring them",
          address_, welcome_acked, welcome_acked + 1, held_from - 1);
      ok = stream->Write(WireBytes(gap.SerializeAsString()));
    }
  }
  if (ok) {
    connected_ = true;
    const SpoolStats s = spool_->Stats();
    spdlog::info(
        "connected to the collector at {}: it holds up to seq {}, {} message(s) to "
        "replay",
        address_, welcome_acked, s.unacked_messages);
    uint64_t pos = spool_->FirstUnackedPosition();
    while (!stop_.load() && !broken.load()) {
      auto frames = spool_->ReadFramesFrom(&pos, kSendChunk, 500);
      if (!frames.ok()) {
        spdlog::error("spool: {}", std::string(frames.status().message()));
        break;
      }
      bool written = true;
      for (const std::string& frame : *frames) {
        if (!(written = stream->Write(WireBytes(frame)))) break;
      }
      if (!written) break;
    }
  }
  const bool was_connected = connected_.exchange(false);
  context.TryCancel();
  reader.join();
  grpc::Status status = stream->Finish();
  {
    std::lock_guard lock(mu_);
    context_ = nullptr;
  }
  if (was_connected && !stop_.load()) {
    spdlog::warn("lost the collector at {}: {}; reconnecting", address_,
                 status.ok() ? "stream closed" : status.error_message());
  }
  return welcomed;
}

}  // namespace ntprof::agent
