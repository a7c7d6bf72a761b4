// swift-tools-version: 6.2
// Coverage-guided fuzz targets (libFuzzer), in a package of their own so the main build and
// `swift test` never compile them. Built and run by scripts/fuzz.sh with -sanitize=fuzzer,address.
import Foundation
import PackageDescription

// A path dependency's identity is its directory name, which differs between clones.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let fuzzTargets: [(name: String, library: String)] = [
    ("jpeg-header", "ImageCodec"), ("jpeg-decode", "ImageCodec"), ("png-header", "ImageCodec"), ("png-decode", "ImageCodec"),
    ("exif-orientation", "ImageCodec"), ("disk-cache-entry", "ImageCache"), ("journal-replay", "ImageCache"),
    ("encode-roundtrip", "ImageCodec"), ("webp-header", "ImageCodec"), ("webp-decode", "ImageCodec"),
    ("heif-header", "ImageCodec"), ("heif-decode", "ImageCodec"), ("heif-container", "ImageCodec"),
    ("service-request", "ImageService"), ("gif-decode", "ImageCodec"), ("webp-animation", "ImageCodec"),
]

let package = Package(
    name: "image-engine-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "CFuzzDriver", path: "Sources/CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], path: "Sources/FuzzSupport"),
    ] + fuzzTargets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: ["FuzzSupport", .product(name: target.library, package: engine)],
            path: "Sources/\(target.name)",
            // libFuzzer brings its own main; the target exports <Module>_main for SwiftPM's link.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    },
    swiftLanguageModes: [.v6]
)
