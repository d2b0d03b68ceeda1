#include "backends/dispatch.h"

#include "backends/registry.h"

namespace bc {

Result<DispatchDecision> Dispatch(const CaseSpec& c, const BackendFlags& flags) {
  DispatchDecision d;
  d.algorithm = c.algorithm;
  if (c.engine != "auto") {
    d.engine = FindEngine(c.engine);
    if (d.engine == nullptr) return Status(StatusCode::kInvalidArgument, "unknown engine '" + c.engine + "'");
    if (d.engine->device() != c.device) {
      return Status(StatusCode::kInvalidArgument, "engine " + c.engine + " runs on " +
                                                      DeviceName(d.engine->device()) + ", not " +
                                                      DeviceName(c.device));
    }
    d.reason = "engine forced by the case (engine=" + c.engine + ")";
  } else if (c.device == Device::kCpu) {
    const Availability onednn = FindEngine("onednn")->availability();
    if (flags.mkldnn_enabled && onednn.available) {
      d.engine = FindEngine("onednn");
      d.reason = "mkldnn.enabled=true and oneDNN is available";
    } else {
      d.engine = FindEngine("reference");
      d.reason = flags.mkldnn_enabled ? "oneDNN unavailable (" + onednn.reason + "): native CPU path"
                                      : "mkldnn.enabled=false: native CPU path";
    }
  } else {
    if (!flags.cudnn_enabled) {
      return Status(StatusCode::kUnimplemented,
                    "cudnn.enabled=false selects PyTorch's native CUDA kernels, which this build does not provide");
    }
    d.engine = FindEngine("cudnn");
    d.reason = "cudnn.enabled=true";
  }
  const Availability a = d.engine->availability();
  if (!a.available) {
    return Status(StatusCode::kUnavailable, std::string(d.engine->name()) + " unavailable: " + a.reason);
  }
  return d;
}

}  // namespace bc
