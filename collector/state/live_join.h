// The live join of one session: records enter as they arrive (wall clock), pairs and leftovers
// leave to the sink for watch and metrics. A session recorded on one side only passes its records
// straight through, and so does a joined session its local block devices' records. Memory is
// bounded by JoinOptions::max_pending; a side that never arrives costs one window of records, then
// they leave as leftovers.
#pragma once

#include "join_engine.h"

namespace ntprof::collector {

class LiveJoin {
 public:
  LiveJoin(bool join_sides, JoinOptions options, JoinEngine::Sink sink);

  void Add(v1::Record record, int64_t now_ns);
  void Expire(int64_t now_ns);
  void Flush();
  // A session whose agents come and go (the standing session): once it has both sides, it joins.
  void set_join_sides(bool join_sides) { join_sides_ = join_sides; }

  const JoinStats& stats() const { return engine_.stats(); }
  size_t pending() const { return engine_.pending(); }

 private:
  bool join_sides_;
  JoinEngine::Sink sink_;
  JoinEngine engine_;
  JoinStats single_side_;  // counts when not joining
};

}  // namespace ntprof::collector
