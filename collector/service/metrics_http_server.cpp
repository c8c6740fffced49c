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

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace ntprof::collector {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// The certificate and key are PEM text in memory (already read and checked by LoadTls).
absl::Status UsePem(SSL_CTX* ctx, const TlsMaterial& tls) {
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

absl::Status MetricsHttpServer::Start(const std::string& address, const TlsFlags& flags,
                                      const TlsMaterial& tls, Body body) {
  body_ = std::move(body);
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen ", address, ": expected HOST:PORT, e.g. localhost:9464"));
  }
  std::string host = address.substr(0, colon);
  if (absl::StartsWith(host, "[")) host = host.substr(1, host.size() - 2);
  if (!flags.enabled() && !IsLocalAddress(address) && !flags.insecure) {
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
  if (ssl_ctx_) {
    ssl = SSL_new(ssl_ctx_);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      SSL_free(ssl);
      return;
    }
  }
  auto read_some = [&](char* buf, int n) { return ssl ? SSL_read(ssl, buf, n) : read(fd, buf, n); };
  auto write_all = [&](const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
      const int n = ssl ? SSL_write(ssl, s.data() + done, static_cast<int>(s.size() - done))
                        : static_cast<int>(write(fd, s.data() + done, s.size() - done));
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  };
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
    const int n = read_some(buf, sizeof(buf));
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  std::string status = "404 Not Found", type = "text/plain", body = "try GET /metrics\n";
  if (absl::StartsWith(request, "GET /metrics ") || absl::StartsWith(request, "GET /metrics?")) {
    status = "200 OK";
    type = "text/plain; version=0.0.4";
    body = body_();
  } else if (request.find("\r\n\r\n") == std::string::npos) {
    status = "400 Bad Request";
    body = "bad request\n";
  }
  write_all(absl::StrCat("HTTP/1.0 ", status, "\r\nContent-Type: ", type, "\r\nContent-Length: ",
                         body.size(), "\r\nConnection: close\r\n\r\n", body));
  if (ssl) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
}

}  // namespace ntprof::collector
