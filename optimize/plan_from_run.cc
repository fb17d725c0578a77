//===- plan_from_run.cc - a prefetch plan from a recorded cold start -----===//
#include "optimize/plan_from_run.h"

#include <unistd.h>

#include "analyze/access_order.h"

namespace syspgo {

Result<PlanFromRunResult> PlanFromRun(Db& db, int64_t run_id) {
  auto order = FileAccessOrder(db, run_id);
  if (!order) return order.error();
  if (order->touches.empty())
    return MakeError("run " + std::to_string(run_id) + " of '" + db.path() +
                     "' touched no file the plan could name (" + std::to_string(order->unnamed.size()) +
                     " unnamed). Record a cold start with the file groups on: syspgo collect --cold --probes "
                     "fileio,faults,pagecache -o " + db.path() + " -- COMMAND");
  PlanBuilder b;
  for (const FileTouch& t : order->touches) b.Add({t.path, t.dev, t.ino, t.offset, t.length, t.ts_ns});
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  b.SetCreation({SYSPGO_VERSION, host, {run_id}, 1});
  auto built = b.Build();
  PlanFromRunResult r;
  r.plan = std::move(built.plan);
  r.warnings = std::move(built.warnings);
  r.touches = order->touches.size();
  if (!order->unnamed.empty())
    r.warnings.push_back(std::to_string(order->unnamed.size()) +
                         " touched file(s) left out: the run never saw their path (opened before collection, "
                         "or the fileio group was off)");
  if (r.plan.files.empty())
    return MakeError("none of the files run " + std::to_string(run_id) + " touched is on disk as it was: " +
                     (r.warnings.empty() ? std::string("?") : r.warnings.front()));
  return r;
}

}  // namespace syspgo
