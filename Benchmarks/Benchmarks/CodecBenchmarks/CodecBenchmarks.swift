import Benchmark
import Foundation
import ImageBudget
import ImageCodec

/// Decode + downsample to 1080 px + encode at q85, per sample file: the thumbnail hot path.
/// The in-run reference is the same job done the naive way: full-size decode, then Lanczos,
/// then encode, which is what decode-time downsampling saves. Dragonfly-P3.jpg also runs with
/// its profile stripped: the same pixels without colour management, which prices the
/// conversion to sRGB.
///
/// package-benchmark runs every benchmark in a process of its own, and each reads only its
/// own file (outside the measurement), so a peak RSS is that benchmark's alone.
let benchmarks: @Sendable () -> Void = {
    let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SampleImages")
    let files: [String]
    do {
        files = try FileManager.default.contentsOfDirectory(atPath: samples.path)
            .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()
    } catch {
        fatalError("CodecBenchmarks: cannot list the sample images in \(samples.path): \(error)")
    }
    guard !files.isEmpty else { fatalError("CodecBenchmarks: no .jpg or .png in \(samples.path)") }

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 20
    )

    /// The file's bytes, read before the measurement starts; a read failure stops the run.
    func load(_ file: String, untagged: Bool = false) -> Data {
        do {
            let data = try Data(contentsOf: samples.appendingPathComponent(file))
            return untagged ? strippingICCProfile(data) : data
        } catch {
            fatalError("CodecBenchmarks: cannot read \(file): \(error)")
        }
    }

    let thumbnailDecoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 1080))
    func thumbnail(_ name: String, file: String, untagged: Bool = false) {
        Benchmark("thumbnail 1080 q85: \(name)") { benchmark in
            let data = load(file, untagged: untagged)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let bitmap = try thumbnailDecoder.decode(data)
                blackHole(try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 85)))
            }
        }
    }
    for file in files {
        thumbnail(file, file: file)
        Benchmark("full decode + resample (reference): \(file)") { benchmark in
            let data = load(file)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let bitmap = try ImageDecoder().decode(data).downsampled(maxPixelSize: 1080)
                blackHole(try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 85)))
            }
        }
    }
    // The budget's quality metrics on a 1280×960 pair (a photo and its q75 JPEG): SSIMULACRA2
    // one-off and against a prepared reference (how the budget search calls it), with luma
    // SSIM, the metric it replaces, as the in-run reference.
    if files.contains("Sunset.jpg") {
        func pair() -> (Bitmap, Bitmap) {
            do {
                let decoder = ImageDecoder(options: DecodingOptions(resize: .fill(width: 1280, height: 960)))
                let reference = try decoder.decode(load("Sunset.jpg"))
                let distorted = try ImageDecoder().decode(try ImageEncoder.jpeg(reference, options: JPEGEncodingOptions(quality: 75)))
                return (reference, distorted)
            } catch {
                fatalError("CodecBenchmarks: cannot make the 1280×960 pair: \(error)")
            }
        }
        Benchmark("SSIMULACRA2 1280x960 pair") { benchmark in
            let (reference, distorted) = pair()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try SSIMULACRA2.score(reference, distorted)) }
        }
        Benchmark("SSIMULACRA2 1280x960 against a prepared reference") { benchmark in
            let (reference, distorted) = pair()
            let prepared = try SSIMULACRA2.Reference(reference)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try SSIMULACRA2.score(prepared, distorted)) }
        }
        Benchmark("SSIM (luma) 1280x960 pair") { benchmark in
            let (reference, distorted) = pair()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(StructuralSimilarity.score(try LumaPlane(reference), try LumaPlane(distorted)))
            }
        }
    }
    if files.contains("Dragonfly-P3.jpg") {
        thumbnail("Dragonfly-P3.jpg untagged", file: "Dragonfly-P3.jpg", untagged: true)
    }
}

/// `jpeg` without its APP2 ICC segments.
func strippingICCProfile(_ jpeg: Data) -> Data {
    var bytes = [UInt8](jpeg)
    var offset = 2
    while offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] != 0xDA {
        let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        if bytes[offset + 1] == 0xE2 { bytes.removeSubrange(offset..<min(bytes.count, offset + 2 + length)) } else { offset += 2 + length }
    }
    return Data(bytes)
}
