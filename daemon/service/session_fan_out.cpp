#include "session_fan_out.h"

#include <algorithm>
#include <span>
#include <vector>

#include "loss_counters.h"
#include "monotonic_clock.h"
#include "recording_settings.h"
#include "stage_model.h"

namespace ntprof::agent {

bool SessionFanOut::Join(const v1::RecordingSettings& settings, BatchSink* sink,
                         uint64_t start_mono_ns, uint64_t end_mono_ns, Finished finished,
                         const std::function<void()>& opened) {
  std::lock_guard lock(mu_);
  if (closed_) return false;
  opened();
  Member& m = members_[settings.session()];
  m.settings = settings;
  m.sink = sink;
  m.end_mono_ns = end_mono_ns;
  m.start_mono_ns = start_mono_ns;
  m.losses_at_join = last_losses_;
  m.finished = std::move(finished);
  UpdateStopLocked();
  return true;
}

void SessionFanOut::Leave(const std::string& session) {
  std::lock_guard lock(mu_);
  if (auto it = members_.find(session); it != members_.end()) {
    it->second.leaving = true;
    it->second.left_mono_ns = std::min(it->second.left_mono_ns, ClockNs(CLOCK_MONOTONIC));
  }
  UpdateStopLocked();
}

bool SessionFanOut::Has(const std::string& session) const {
  std::lock_guard lock(mu_);
  return members_.count(session) != 0;
}

uint32_t SessionFanOut::FinestRate() const {
  std::lock_guard lock(mu_);
  uint32_t finest = 0;
  for (const auto& [name, m] : members_) {
    if (!m.leaving && (finest == 0 || m.settings.sample_rate() < finest))
      finest = m.settings.sample_rate();
  }
  return finest;
}

void SessionFanOut::UpdateStopLocked() {
  const bool anyone_stays = std::any_of(members_.begin(), members_.end(),
                                        [](const auto& entry) { return !entry.second.leaving; });
  stop_ = !anyone_stays;
  closed_ = closed_ || stop_;
}

void SessionFanOut::ShareOf(const Member& m, const BatchShare& batch, Share* share) const {
  share->extras.Clear();
  share->extras.set_seq(batch.extras().seq());
  share->kept.clear();
  for (size_t i = 0; i < batch.size(); ++i) {
    const ntprof_record& r = batch.raw(i);
    const RecordIdentity& id = batch.batch().identity(r);
    // __u64 is unsigned long long, uint64_t unsigned long: the same 64 bits
    static_assert(sizeof(r.stamps[0]) == sizeof(uint64_t));
    const uint64_t earliest = EarliestStamp(std::span<const uint64_t>(
        reinterpret_cast<const uint64_t*>(r.stamps), static_cast<size_t>(StampCount(r.role))));
    if (earliest >= m.start_mono_ns && earliest < m.left_mono_ns &&
        SessionNames(m.settings, id.subsys_nqn, id.device) &&
        SessionSamples(m.settings, r.opcode, r.nsid, r.slba, r.nlb, r.cid))
      share->kept.push_back(batch.index(i));
  }
  const auto& devices = m.settings.devices();
  for (const v1::DeviceCounters& c : batch.extras().counters()) {
    if (devices.empty() || std::find(devices.begin(), devices.end(), c.device()) != devices.end())
      *share->extras.add_counters() = c;
  }
  if (batch.extras().has_losses())
    *share->extras.mutable_losses() = LossDelta(m.losses_at_join, batch.extras().losses());
}

absl::Status SessionFanOut::WriteBatch(const BatchShare& batch) {
  std::vector<std::function<void()>> ended;  // called once the lock is released
  Share share;
  {
    std::lock_guard lock(mu_);
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    for (auto it = members_.begin(); it != members_.end();) {
      Member& m = it->second;
      const bool by_duration = m.end_mono_ns != 0 && now >= m.end_mono_ns;
      if (by_duration) {
        m.leaving = true;
        m.left_mono_ns = std::min(m.left_mono_ns, m.end_mono_ns);
      }
      ShareOf(m, batch, &share);
      // Every record kept: the batch's own list (none, or the same) stands for the share's.
      const bool every = share.kept.size() == batch.size();
      absl::Status st = m.sink->WriteBatch(
          BatchShare(batch.batch(), share.extras, every ? batch.kept() : &share.kept));
      // The last session to leave stays for the recorder's drained end (Finalize).
      if (st.ok() && !(m.leaving && members_.size() > 1)) {
        ++it;
        continue;
      }
      v1::FileTrailer trailer;
      trailer.set_end_wall_ns(ClockNs(CLOCK_REALTIME));
      trailer.set_end_mono_ns(now);
      if (batch.extras().has_losses())
        *trailer.mutable_losses() = LossDelta(m.losses_at_join, batch.extras().losses());
      if (st.ok()) st = m.sink->Finalize(trailer);
      absl::StatusOr<v1::FileTrailer> result =
          st.ok() ? absl::StatusOr<v1::FileTrailer>(trailer) : st;
      ended.push_back([finished = std::move(m.finished), result, by_duration] {
        finished(result, by_duration ? "duration elapsed" : "");
      });
      it = members_.erase(it);
    }
    if (batch.extras().has_losses()) last_losses_ = batch.extras().losses();
    UpdateStopLocked();
  }
  for (auto& f : ended) f();
  // A session whose sink failed has ended with its error; the others go on.
  return absl::OkStatus();
}

absl::Status SessionFanOut::Finalize(const v1::FileTrailer& trailer) {
  std::vector<std::function<void()>> ended;
  absl::Status first_error;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, m] : members_) {
      v1::FileTrailer t = trailer;
      *t.mutable_losses() = LossDelta(m.losses_at_join, trailer.losses());
      const bool by_duration = m.end_mono_ns != 0 && trailer.end_mono_ns() >= m.end_mono_ns;
      absl::Status st = m.sink->Finalize(t);
      if (!st.ok() && first_error.ok()) first_error = st;
      absl::StatusOr<v1::FileTrailer> result = st.ok() ? absl::StatusOr<v1::FileTrailer>(t) : st;
      ended.push_back([finished = std::move(m.finished), result, by_duration] {
        finished(result, by_duration ? "duration elapsed" : "");
      });
    }
    members_.clear();
    stop_ = closed_ = true;
  }
  for (auto& f : ended) f();
  return first_error;
}

void SessionFanOut::Fail(const absl::Status& error, const std::string& reason) {
  std::map<std::string, Member> failed;
  {
    std::lock_guard lock(mu_);
    failed.swap(members_);
    stop_ = closed_ = true;
  }
  for (auto& [name, m] : failed) m.finished(error, reason);
}

}  // namespace ntprof::agent
