#include "metrics_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {
namespace {

// How long one response may take to leave, however slowly the client reads.
constexpr std::chrono::seconds kResponseTime{10};

// A TLS client opens with a handshake record (content type 22). Anything else on the TLS port is
// a client speaking plaintext, most likely http:// where https:// was meant.
constexpr unsigned char kTlsHandshakeRecord = 0x16;

std::string Render(const HttpResponse& response) {
  return absl::StrCat("HTTP/1.0 ", response.status, "\r\nContent-Type: ", response.type,
                      "\r\nContent-Length: ", response.body.size(), "\r\nConnection: close\r\n\r\n",
                      response.body);
}

// The value of the Host header of a request head, or "" without one.
std::string HostHeader(const std::string& head) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos && absl::EqualsIgnoreCase(line.substr(0, colon), "host")) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

// Answered in plaintext, so that curl or a browser shows why instead of a reset connection.
HttpResponse TlsRequired(const std::string& head) {
  const std::string host = HostHeader(head);
  return {"400 Bad Request",
          absl::StrCat("this metrics endpoint speaks TLS: use https://",
                       host.empty() ? "HOST:PORT" : host, "/metrics instead of http://\n")};
}

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// The certificate and key are PEM text in memory (already read and checked by LoadTls).
absl::Status UsePem(SSL_CTX* ctx, const common::TlsMaterial& tls) {
  BIO* cert_bio = BIO_new_mem_buf(tls.cert.data(), static_cast<int>(tls.cert.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(tls.key.data(), static_cast<int>(tls.key.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  const bool ok = cert && key && SSL_CTX_use_certificate(ctx, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) return absl::InvalidArgumentError("metrics listener: certificate and key do not load");
  return absl::OkStatus();
}

}  // namespace

absl::Status MetricsHttpServer::Start(const std::string& address, const common::TlsFlags& flags,
                                      const common::TlsMaterial& tls, Body body) {
  body_ = std::move(body);
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen ", address, ": expected HOST:PORT, e.g. localhost:9464"));
  }
  std::string host = address.substr(0, colon);
  if (absl::StartsWith(host, "[")) host = host.substr(1, host.size() - 2);
  if (!flags.enabled() && !common::IsLocalAddress(address) && !flags.insecure) {
    return absl::InvalidArgumentError(absl::StrCat("refusing to serve metrics on ", address,
                                                   " without TLS: pass --tls-cert/--tls-key, ",
                                                   "--insecure, or a localhost address"));
  }
  if (flags.enabled()) {
    ssl_ctx_ = SSL_CTX_new(TLS_server_method());
    if (auto st = UsePem(ssl_ctx_, tls); !st.ok()) return st;
  }

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints,
                  &found) != 0 ||
      !found) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics-listen ", address, ": unknown host"));
  }
  listen_fd_ = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = bind(listen_fd_, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!bound || listen(listen_fd_, 16) != 0) {
    return Errno(absl::StrCat("metrics: cannot listen on ", address));
  }
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &len);
  port_ = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) return Errno("metrics: pipe");
  thread_ = std::thread([this] { Serve(); });
  return absl::OkStatus();
}

void MetricsHttpServer::Stop() {
  if (thread_.joinable()) {
    (void)!write(stop_pipe_[1], "x", 1);
    thread_.join();
  }
  for (int* fd : {&listen_fd_, &stop_pipe_[0], &stop_pipe_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  if (ssl_ctx_) SSL_CTX_free(ssl_ctx_);
  ssl_ctx_ = nullptr;
}

void MetricsHttpServer::Serve() {
  // A client that closes early must not kill the process: SSL_write reaches write(2), which
  // raises SIGPIPE (plaintext uses MSG_NOSIGNAL). Blocked here, it stays pending on this thread.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    timeval timeout{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    Handle(fd);
    close(fd);
  }
}

void MetricsHttpServer::Handle(int fd) {
  SSL* ssl = nullptr;
  bool plaintext_on_tls_port = false;
  if (ssl_ctx_) {
    unsigned char first = 0;
    if (recv(fd, &first, 1, MSG_PEEK) != 1) return;
    plaintext_on_tls_port = first != kTlsHandshakeRecord;
    if (!plaintext_on_tls_port) {
      ssl = SSL_new(ssl_ctx_);
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) != 1) {
        SSL_free(ssl);
        return;
      }
    }
  }
  HttpConnection connection(fd, ssl);
  std::string head;
  const HttpConnection::HeadResult read = connection.ReadHead(&head);
  const HttpResponse response = plaintext_on_tls_port ? TlsRequired(head) : Answer(read, head);
  connection.WriteAll(Render(response), std::chrono::steady_clock::now() + kResponseTime);
  connection.Finish();
}

HttpResponse MetricsHttpServer::Answer(HttpConnection::HeadResult read,
                                       const std::string& head) const {
  switch (read) {
    case HttpConnection::HeadResult::kTooLarge:
      return {
          "431 Request Header Fields Too Large",
          absl::StrCat("request header larger than ", HttpConnection::kMaxHeadBytes, " bytes\n")};
    case HttpConnection::HeadResult::kIncomplete:
      return {"400 Bad Request", "incomplete request: no blank line after the headers\n"};
    case HttpConnection::HeadResult::kComplete:
      break;
  }
  if (absl::StartsWith(head, "GET /metrics ") || absl::StartsWith(head, "GET /metrics?")) {
    return {"200 OK", body_(), "text/plain; version=0.0.4"};
  }
  return {"404 Not Found", "try GET /metrics\n"};
}

}  // namespace ntprof::collector
