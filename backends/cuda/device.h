// What every CUDA engine shares: CUDA's availability (with the error when
// there is no driver or device), device buffers, moving logical NCHW fp32
// host tensors to and from the device in a problem's layout and dtype, CUDA
// event timing, and a watermark of device memory in use. Compiled only when
// the CUDA toolkit is found.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/gpu.h"
#include "backends/engine.h"

namespace bc::cuda {

Status FromCuda(cudaError_t e, const char* call);

// A failed call returns its Status, naming the call (its file and line go to
// the Status's trail).
#define BC_CUDA(call)                                                                                  \
  do {                                                                                                 \
    const cudaError_t bc_e_ = (call);                                                                  \
    if (bc_e_ != cudaSuccess) return ::bc::cuda::FromCuda(bc_e_, #call).Through(__FILE__ ":" BC_STRINGIFY(__LINE__)); \
  } while (0)

// cudaGetDeviceCount and the first device's name and SM; the reason carries
// the CUDA error where there is none.
Availability CudaAvailability();

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  Status Allocate(size_t bytes);
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A 4-d tensor's logical NCHW dims and how it is stored on the device.
struct TensorShape {
  int64_t n = 1, c = 1, h = 1, w = 1;
  Layout layout = Layout::kNchw;
  DataType dtype = DataType::kF32;
  int64_t elems() const { return n * c * h * w; }
  size_t bytes() const { return static_cast<size_t>(elems()) * (dtype == DataType::kF16 ? 2 : 4); }
};

// Copies a logical NCHW fp32 host tensor into `dst` (allocated to fit) in the
// shape's layout and dtype, and back.
Status Upload(const std::vector<float>& host, const TensorShape& shape, DeviceBuffer& dst);
Status Download(const DeviceBuffer& src, const TensorShape& shape, std::vector<float>& host);

// Times work on the default stream with CUDA events.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  void Start();
  // Milliseconds since Start, after synchronising on the stop event.
  Result<double> StopMs();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Runs `work` (returning Status) between CUDA events and stores its device
// time in nanoseconds.
template <typename Work>
Status TimedOnDevice(EventTimer& timer, std::optional<double>& device_ns, Work work) {
  timer.Start();
  BC_RETURN_IF_ERROR(work());
  Result<double> ms = timer.StopMs();
  if (!ms.ok()) return ms.status();
  device_ns = ms.value() * 1e6;
  return Status::Ok();
}

// Device 0's fp32 (non-tensor-core) peak from its specification: SMs x fp32
// lanes per SM (by compute capability) x 2 flops x peak clock; with its
// name. UNAVAILABLE without a device.
struct SpecPeak {
  std::string device;
  double gflops = 0;
  double memory_bytes_per_second = 0;  // bus width x memory clock x 2 (DDR)
};
Result<SpecPeak> DeviceSpecPeak();

// Device memory in use (total - free, from cudaMemGetInfo), in bytes.
int64_t DeviceBytesInUse();
// Device memory free (cudaMemGetInfo), in bytes.
Result<int64_t> DeviceBytesFree();

}  // namespace bc::cuda
