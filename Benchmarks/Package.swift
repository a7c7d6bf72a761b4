// swift-tools-version: 6.1
// Benchmarks live in their own package so the main build and `swift test` stay lean.
import Foundation
import PackageDescription

// A path dependency's identity is its directory name, which differs between clones
// (`main`, `image-engine`, ...), so derive it instead of hard-coding it.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "image-engine-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Plain timing, without package-benchmark: its ARC and malloc instrumentation on
        // Linux adds ~800 ns to every cache hit (NSCache's and ours alike), which would
        // swamp the ~100 ns being measured.
        .executableTarget(
            name: "cache-report",
            dependencies: [.product(name: "ImageCache", package: engine)],
            path: "Sources/cache-report"
        ),
        // The upload-budget allocator against the naive split and one shared quality.
        .executableTarget(
            name: "budget-report",
            dependencies: [
                .product(name: "ImageBudget", package: engine),
                .product(name: "ImageCodec", package: engine),
            ],
            path: "Sources/budget-report"
        ),
    ],
    swiftLanguageModes: [.v6]
)
