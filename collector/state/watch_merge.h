// One interval of a ring's watch out of its collectors' updates (collector.proto, WatchUpdate):
// every collector's groups, a group (session, name, scope) held by several combined. Kept apart
// from the streams that carry the updates so it is tested without network.
#pragma once

#include <vector>

#include "ntprof/v1/collector.pb.h"

namespace ntprof::collector {

// `local`'s interval (end, span, drops, notes) with the groups of `parts` added: a peer's updates
// that arrived since the last interval, possibly more than one when its clock runs ahead. Counts
// (sampled, IOPS as operations) are summed and turned back into rates over local's span; means are
// weighted by sampled; a combined p99 is the largest part's (an upper bound). A group seen once
// keeps its line as it came; a combined one gets a new line in the same format.
v1::WatchUpdate MergeWatchUpdates(v1::WatchUpdate local, const std::vector<v1::WatchUpdate>& parts);

}  // namespace ntprof::collector
