import Benchmark
import Foundation
import ImageCodec

/// Decode + downsample to 1080 px + encode at q85, per sample file: the thumbnail hot path.
/// The in-run reference is the same job done the naive way: full-size decode, then Lanczos,
/// then encode, which is what decode-time downsampling saves.
let benchmarks: @Sendable () -> Void = {
    let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SampleImages")
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? [])
        .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }
        .sorted()

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 20
    )

    let thumbnailDecoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 1080))
    for file in files {
        guard let data = try? Data(contentsOf: samples.appendingPathComponent(file)) else { continue }
        Benchmark("thumbnail 1080 q85: \(file)") { benchmark in
            for _ in benchmark.scaledIterations {
                let bitmap = try thumbnailDecoder.decode(data)
                blackHole(try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 85)))
            }
        }
        Benchmark("full decode + resample (reference): \(file)") { benchmark in
            for _ in benchmark.scaledIterations {
                let bitmap = try ImageDecoder().decode(data).downsampled(maxPixelSize: 1080)
                blackHole(try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 85)))
            }
        }
    }
}
