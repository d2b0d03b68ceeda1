#include "backends/cuda/device.h"

#include "backends/cuda/status_map.h"

namespace bc::cuda {

static_assert(kCudaErrorMemoryAllocation == cudaErrorMemoryAllocation);
static_assert(kCudaErrorInitializationError == cudaErrorInitializationError);
static_assert(kCudaErrorStubLibrary == cudaErrorStubLibrary);
static_assert(kCudaErrorInsufficientDriver == cudaErrorInsufficientDriver);
static_assert(kCudaErrorCallRequiresNewerDriver == cudaErrorCallRequiresNewerDriver);
static_assert(kCudaErrorNoDevice == cudaErrorNoDevice);
static_assert(kCudaErrorSystemNotReady == cudaErrorSystemNotReady);
static_assert(kCudaErrorSystemDriverMismatch == cudaErrorSystemDriverMismatch);
static_assert(kCudaErrorCompatNotSupportedOnDevice == cudaErrorCompatNotSupportedOnDevice);

Status FromCuda(cudaError_t e, const char* call) {
  return Status(CudaErrorCode(static_cast<int>(e)), std::string(call) + " returned " +
                                                        std::to_string(static_cast<int>(e)) + " (" +
                                                        cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")",
                CudaErrorSource(static_cast<int>(e)));
}

namespace {

std::string CudaVersion(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

CudaVersions LoadedCudaVersions() {
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  return {driver == 0 ? "0" : CudaVersion(driver), CudaVersion(runtime)};
}

std::optional<GpuInfo> FirstGpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return std::nullopt;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return std::nullopt;
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  return GpuInfo{.name = prop.name,
                 .arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor),
                 .count = count,
                 .driver = CudaVersion(driver),
                 .cuda_runtime = CudaVersion(runtime)};
}

Availability CudaAvailability() {
  Availability a;
  a.engine = "cuda";
  a.built = true;
  int runtime = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  a.library_version = CudaVersion(runtime);
  a.version = "CUDA runtime " + a.library_version;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    const Status s = FromCuda(e, "cudaGetDeviceCount");
    a.reason = s.message();
    a.error = s.code() != StatusCode::kUnavailable;
    return a;
  }
  const std::optional<GpuInfo> gpu = FirstGpu();
  if (count == 0 || !gpu) {
    a.reason = "cudaGetDeviceCount found no CUDA device";
    return a;
  }
  a.available = true;
  a.reason = std::to_string(count) + " device(s); device 0: " + gpu->name + " (" + gpu->arch + "), driver API " +
             gpu->driver;
  return a;
}

Result<SpecPeak> DeviceSpecPeak() {
  int count = 0;
  BC_CUDA(cudaGetDeviceCount(&count));
  if (count == 0) return Status(StatusCode::kUnavailable, "cudaGetDeviceCount found no CUDA device");
  cudaDeviceProp prop{};
  BC_CUDA(cudaGetDeviceProperties(&prop, 0));
  int sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0;
  BC_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  BC_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  BC_CUDA(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0));
  BC_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
  // fp32 lanes per SM: 64 on sm_60/70/75/80 (P100, V100, T4, A100); 128 on
  // sm_50/52/61 and on sm_86 and later (A10, L4, H100, B200).
  const int cc = prop.major * 10 + prop.minor;
  const int lanes = cc >= 86 || cc == 61 || cc == 52 || cc == 50 ? 128 : 64;
  SpecPeak peak;
  peak.device = prop.name;
  peak.gflops = 2.0 * sms * lanes * (clock_khz * 1e3) * 1e-9;
  peak.memory_bytes_per_second = 2.0 * (memory_khz * 1e3) * (bus_bits / 8.0);
  return peak;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

Status DeviceBuffer::Allocate(size_t bytes) {
  if (ptr_ != nullptr) {
    cudaFree(ptr_);
    ptr_ = nullptr;
  }
  bytes_ = bytes;
  if (bytes == 0) return Status::Ok();
  BC_CUDA(cudaMalloc(&ptr_, bytes));
  return Status::Ok();
}

namespace {

// Index of logical (n, c, h, w) in the shape's storage order.
int64_t Physical(const TensorShape& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return s.layout == Layout::kNchw ? ((n * s.c + c) * s.h + h) * s.w + w : ((n * s.h + h) * s.w + w) * s.c + c;
}

template <typename Fn>
void ForEach(const TensorShape& s, Fn fn) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) fn(((n * s.c + c) * s.h + h) * s.w + w, Physical(s, n, c, h, w));
}

}  // namespace

Status Upload(const std::vector<float>& host, const TensorShape& shape, DeviceBuffer& dst) {
  if (static_cast<int64_t>(host.size()) != shape.elems()) {
    return Status(StatusCode::kInvalidArgument, "host tensor size does not match its shape");
  }
  BC_RETURN_IF_ERROR(dst.Allocate(shape.bytes()));
  if (shape.dtype == DataType::kF16) {
    std::vector<_Float16> staged(host.size());
    ForEach(shape, [&](int64_t logical, int64_t phys) { staged[phys] = static_cast<_Float16>(host[logical]); });
    BC_CUDA(cudaMemcpy(dst.get(), staged.data(), shape.bytes(), cudaMemcpyHostToDevice));
  } else {
    std::vector<float> staged(host.size());
    ForEach(shape, [&](int64_t logical, int64_t phys) { staged[phys] = host[logical]; });
    BC_CUDA(cudaMemcpy(dst.get(), staged.data(), shape.bytes(), cudaMemcpyHostToDevice));
  }
  return Status::Ok();
}

Status Download(const DeviceBuffer& src, const TensorShape& shape, std::vector<float>& host) {
  host.resize(static_cast<size_t>(shape.elems()));
  if (shape.dtype == DataType::kF16) {
    std::vector<_Float16> staged(host.size());
    BC_CUDA(cudaMemcpy(staged.data(), src.get(), shape.bytes(), cudaMemcpyDeviceToHost));
    ForEach(shape, [&](int64_t logical, int64_t phys) { host[logical] = static_cast<float>(staged[phys]); });
  } else {
    std::vector<float> staged(host.size());
    BC_CUDA(cudaMemcpy(staged.data(), src.get(), shape.bytes(), cudaMemcpyDeviceToHost));
    ForEach(shape, [&](int64_t logical, int64_t phys) { host[logical] = staged[phys]; });
  }
  return Status::Ok();
}

EventTimer::EventTimer() {
  (void)cudaEventCreate(&start_);
  (void)cudaEventCreate(&stop_);
}

EventTimer::~EventTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

void EventTimer::Start() { (void)cudaEventRecord(start_); }

Result<double> EventTimer::StopMs() {
  BC_CUDA(cudaEventRecord(stop_));
  BC_CUDA(cudaEventSynchronize(stop_));
  float ms = 0;
  BC_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms);
}

int64_t DeviceBytesInUse() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 0;
  return static_cast<int64_t>(total - free_bytes);
}

Result<int64_t> DeviceBytesFree() {
  size_t free_bytes = 0, total = 0;
  BC_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return static_cast<int64_t>(free_bytes);
}

}  // namespace bc::cuda
