// swift-tools-version: 6.2
// Benchmarks live in their own package so the main build and `swift test` stay lean.
import Foundation
import PackageDescription

// A path dependency's identity is its directory name, which differs between clones
// (`main`, `image-engine`, ...), so derive it instead of hard-coding it.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "image-engine-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    ],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "ImageBudget", package: engine),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // The loopback image server of the pipeline tests: Sources/ImageServer is a link to
        // Tests/ImageServer, so both use one copy of it.
        .target(name: "ImageServer", dependencies: [.product(name: "FlyingFox", package: "FlyingFox")], path: "Sources/ImageServer"),
        // Plain timing, without package-benchmark: its ARC and malloc instrumentation on
        // Linux adds ~800 ns to every cache hit (NSCache's and ours alike), which would
        // swamp the ~100 ns being measured.
        .target(name: "BenchmarkSupport", path: "Sources/BenchmarkSupport"),
        .executableTarget(
            name: "cache-report",
            dependencies: ["BenchmarkSupport", .product(name: "ImageCache", package: engine)],
            path: "Sources/cache-report"
        ),
        // The pipeline's memory and disk hits against the caches called directly, cold loads
        // against a plain URLSession + decode loop, and what coalescing saves.
        .executableTarget(
            name: "pipeline-report",
            dependencies: [
                "BenchmarkSupport", "ImageServer",
                .product(name: "ImagePipeline", package: engine),
                .product(name: "ImageCache", package: engine),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Sources/pipeline-report"
        ),
        // The strategy benchmark: a loopback server in its own process, and one process per
        // strategy run (so peak memory and CPU time are each strategy's own).
        .executableTarget(name: "image-server", dependencies: ["ImageServer"], path: "Sources/image-server"),
        .executableTarget(
            name: "strategy-run",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ImagePipeline", package: engine),
                .product(name: "ImageCache", package: engine),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Sources/strategy-run"
        ),
        // What each stage of the thumbnail path costs in SSIM and time, one knob at a time.
        .executableTarget(
            name: "thumbnail-stages",
            dependencies: ["BenchmarkSupport", .product(name: "ImageCodec", package: engine), .product(name: "ImageBudget", package: engine)],
            path: "Sources/thumbnail-stages"
        ),
        // The Lanczos resampler's passes on the sizes the thumbnail path gives it.
        .executableTarget(
            name: "resampler-report",
            dependencies: ["BenchmarkSupport", .product(name: "ImageCodec", package: engine)],
            path: "Sources/resampler-report"
        ),
        // The perceptual JPEG encoder against libjpeg-turbo and jpegli at equal bytes.
        .executableTarget(
            name: "jpeg-encoder-report",
            dependencies: ["BenchmarkSupport", .product(name: "ImageCodec", package: engine), .product(name: "ImageBudget", package: engine)],
            path: "Sources/jpeg-encoder-report"
        ),
        // WebP's and AVIF's bytes and encode time at JPEG's SSIMULACRA2.
        .executableTarget(
            name: "format-report",
            dependencies: ["BenchmarkSupport", .product(name: "ImageCodec", package: engine), .product(name: "ImageBudget", package: engine)],
            path: "Sources/format-report"
        ),
        // The upload-budget allocator against the naive split and one shared quality.
        .executableTarget(
            name: "budget-report",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ImageBudget", package: engine),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Sources/budget-report"
        ),
    ],
    swiftLanguageModes: [.v6]
)
