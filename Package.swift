// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "image-engine",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ImageCodec", targets: ["ImageCodec"]),
        .library(name: "ImageCache", targets: ["ImageCache"]),
        .library(name: "ImageBudget", targets: ["ImageBudget"]),
        .library(name: "MultipartForm", targets: ["MultipartForm"]),
        .library(name: "ImagePipeline", targets: ["ImagePipeline"]),
        // imgproxy-style URL signing alone, for API servers that sign and do not serve.
        .library(name: "URLSigning", targets: ["URLSigning"]),
        .library(name: "ImageService", targets: ["ImageService"]),
        .executable(name: "image-engine", targets: ["image-engine"]),
    ],
    // The thumbnail service and the command-line tool, and only they, need the packages below
    // swift-collections: Hummingbird, SwiftNIO, AsyncHTTPClient, swift-crypto (BoringSSL),
    // ArgumentParser, and the tests' servers. Every use of them is behind the `Server` trait, on
    // by default: this package builds and tests whole as it is. An app that wants only the
    // client products depends with `traits: []`, and SwiftPM then neither fetches nor builds
    // any of them (see the README's "Install"). A trait rather than a second package, because a
    // package in a subdirectory cannot be depended on by Git URL, and rather than a second
    // repository, because the service's tests need the client modules as they are in this
    // commit.
    traits: [
        .trait(
            name: "Server",
            description: "ImageService and the image-engine tool: Hummingbird, SwiftNIO, AsyncHTTPClient, swift-crypto, ArgumentParser."
        ),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // ImageService only: its ETags (SHA-256 through BoringSSL on Linux, already in the
        // server's graph through swift-nio-ssl). Client products hash with Hashing instead.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The pipeline's work queues: waiting work ordered by priority in a heap.
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        // The thumbnail service (ImageService only, nothing below it): HTTP server, its process
        // lifecycle (signals, graceful shutdown), logs, metrics, and the source fetcher that
        // connects to the address it checked.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // The HTTP/1 ↔ HTTPTypes codec Hummingbird puts in every connection (already in the graph
        // through Hummingbird): named here because the service's connection handlers use it.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Tests only: an independent multipart parser to read request bodies back.
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        // Tests and benchmarks only: a small HTTP server (no SwiftNIO) for the loopback image server.
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    ],
    targets: [
        // System libraries, located with pkg-config.
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"]), .brew(["jpeg-turbo"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"]), .brew(["libpng"])]
        ),
        .systemLibrary(
            name: "CLCMS2",
            pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"]), .brew(["little-cms2"])]
        ),
        // WebP in and out: Google's reference codec (decoding with scaling, lossy encoding).
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"]), .brew(["webp"])]
        ),
        // HEIC and AVIF: libheif (HEVC through libde265, AV1 through libaom, both ways).
        .systemLibrary(
            name: "CHEIF",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"]), .brew(["libheif"])]
        ),
        // AVIF in: libavif, the format's reference implementation (fuzzed upstream, with its own
        // size, dimension and image-count limits), decoding AV1 through dav1d.
        .systemLibrary(
            name: "CAVIF",
            // No pkgConfig: libavif's .pc adds -DAVIF_DLL, a flag SwiftPM refuses (with a warning);
            // the header and library are in the system's default paths.
            providers: [.apt(["libavif-dev"]), .brew(["libavif"])]
        ),
        // GIF in: giflib's LZW decoder, handed one frame at a time by the engine's own block
        // walker (GIFContainer), never the file. No pkgConfig: Debian's giflib ships no .pc on
        // every release; the header and library are in the default paths.
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"]), .brew(["giflib"])]
        ),
        // glibc's allocator settings, for the CLI's thumbnail batches and serve (MallocTuning).
        .systemLibrary(name: "CGlibcMalloc"),
        // The one lock of the package (a pthread mutex the thread sanitizer understands),
        // shared by the codec, the caches and the pipeline.
        .target(name: "Locking"),

        // Every setjmp/longjmp and library callback lives here; no image logic.
        .target(
            name: "CImageCodecShim", dependencies: ["CJPEG", "CPNG", "CLCMS2", "CWebP", "CHEIF", "CAVIF", "CGIF", "CImageKernels"],
            // CAVIF and CGIF have no pkg-config entry (see above) to carry their link flags to
            // this target, and libwebp's names libwebp alone (not libwebpmux, the animation
            // encoder).
            linkerSettings: [.linkedLibrary("avif"), .linkedLibrary("gif"), .linkedLibrary("webpmux")]),

        // Hot loops in C, each with a portable twin that gives the same bytes, the version chosen
        // at run time from the CPU (no compiler flags: the package stays usable as a dependency).
        .target(name: "CImageKernels"),

        // Header probe, decode with DCT scaling and streaming resample, orientation, encode.
        .target(name: "ImageCodec", dependencies: ["CImageCodecShim", "CImageKernels", "Locking"]),

        // Fits a set of images into an upload byte budget; SSIM; multipart request bodies.
        .target(name: "ImageBudget", dependencies: ["ImageCodec", "CImageKernels"]),

        // multipart/form-data request bodies (RFC 7578), for uploading what ImageBudget made.
        .target(name: "MultipartForm"),

        // SHA-256 and HMAC-SHA-256 from FIPS 180-4 and RFC 2104, written here: the disk cache's
        // file names and the URL signatures, without a TLS library in a client's build.
        .target(name: "Hashing"),

        // Memory (LRU) and disk caches; generic over keys and values, they know nothing of images.
        .target(name: "ImageCache", dependencies: ["Locking", "Hashing"]),

        // imgproxy's URL signatures (URLSigner, SigningKey): what an API server needs to sign
        // the thumbnail URLs it hands out, and nothing of the service.
        .target(name: "URLSigning", dependencies: ["Hashing"]),

        // Loads images over HTTP through memory and disk caches: coalescing, cancellation,
        // priorities, prefetching, HTTP revalidation, selectable cache strategies.
        .target(name: "ImagePipeline",
                dependencies: ["ImageCodec", "ImageCache", "Locking", .product(name: "HeapModule", package: "swift-collections")]),

        // The HTTP thumbnail service: imgproxy's URLs and signatures, the source policy and its
        // guarded fetcher, admission (workers, queue, memory), result cache, headers, metrics.
        // Hummingbird and NIO live here and nowhere below.
        .target(
            name: "ImageService",
            dependencies: [
                // ImageBudget: `mb:` (max_bytes) fits an output under its cap with the upload
                // budget's search.
                "ImagePipeline", "ImageCodec", "ImageCache", "ImageBudget", "Locking", "URLSigning",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
            ]
        ),

        // Command-line tool: argument parsing and printing only.
        .executableTarget(
            name: "image-engine",
            dependencies: [
                "ImageCodec",
                "ImageCache",
                "ImageBudget",
                "MultipartForm",
                "ImagePipeline",
                "URLSigning",
                "ImageService",
                "CGlibcMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
            ]
        ),

        // Test-only writers for inputs the engine never produces: every PNG colour type × bit
        // depth × interlace, CMYK/YCCK JPEGs, progressive scan scripts, deflated chunk payloads.
        .target(name: "CTestImageWriter", dependencies: ["CJPEG", "CPNG"], path: "Tests/CTestImageWriter",
                linkerSettings: [.linkedLibrary("z")]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // The loopback image server of the pipeline tests (and, through a link, the benchmarks):
        // ETag, Last-Modified, Cache-Control, conditional requests, throttling and fault modes.
        .target(name: "ImageServer", dependencies: [.product(name: "FlyingFox", package: "FlyingFox", condition: .when(traits: ["Server"]))], path: "Tests/ImageServer"),
        .testTarget(name: "ImageCodecTests", dependencies: ["ImageCodec", "CImageKernels", "CTestImageWriter", "TestSupport"]),
        .testTarget(
            name: "ImageBudgetTests",
            dependencies: ["ImageBudget", "ImageCodec", "TestSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "MultipartFormTests",
            dependencies: ["MultipartForm", "TestSupport", .product(name: "MultipartKit", package: "multipart-kit", condition: .when(traits: ["Server"]))]
        ),
        .testTarget(name: "ImageCacheTests", dependencies: ["ImageCache", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ImagePipelineTests", dependencies: ["ImagePipeline", "ImageCodec", "ImageCache", "ImageServer", "TestSupport"]),
        .testTarget(
            name: "ImageServiceTests",
            dependencies: [
                "ImageService", "ImagePipeline", "ImageCodec", "ImageCache", "ImageServer", "TestSupport", "Locking",
                "URLSigning", "Hashing",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Server"])),
                // Hashing's SHA-256 and HMAC checked against BoringSSL's on seeded random input.
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                // ThumbnailServer.services run in a ServiceGroup of the test's own.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                // A connection's handlers driven byte by byte, without a socket.
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["Server"])),
                // An answer's body written to a writer the test holds (the outbound window).
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
            ]
        ),
        // The Swift blocks of the README and the DocC articles, generated by scripts/snippets.py:
        // compiled with the tests so an API change cannot leave an example that no longer builds.
        .testTarget(
            name: "DocumentationSnippets",
            dependencies: [
                "ImageCodec", "ImageCache", "ImagePipeline", "ImageBudget", "MultipartForm", "URLSigning", "ImageService",
                // "Embedding the service" runs the service in a ServiceGroup of its own.
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
            ]
        ),
        // Drives the built executable, as outside checks do.
        .testTarget(name: "ImageEngineCLITests", dependencies: ["image-engine", "ImageCodec", "ImageCache", "ImageServer", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// scripts/test.sh compiles the codec and the budget optimised (-O) in its test build, and the
// codec in its sanitized builds (the C shim is compiled as before): their tests, and the
// CLI's, which run the debug `image-engine`, decode, resample, encode and score real photos,
// which at -Onone took most of the suite's time. Tests still run with `-enable-testing` and
// every precondition and overflow check (the sources use no `assert`). Only the script sets
// it: a package that depends on this one never sees unsafe flags.
if Context.environment["IMAGE_ENGINE_OPTIMIZED_TESTS"] != nil {
    for target in package.targets where ["ImageCodec", "ImageBudget"].contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-O"])]
    }
}

// scripts/test.sh runs the codec, cache and pipeline tests again under the thread and address
// sanitizers. Those builds compile every target of the package and its dependencies with the
// sanitizer, so they leave out what they do not test: the service (and the CLI and tests that
// link it), which would bring SwiftNIO, Hummingbird, AsyncHTTPClient and NIOSSL's BoringSSL,
// and the budget and multipart targets, whose tests bring MultipartKit (and SwiftNIO again).
if Context.environment["IMAGE_ENGINE_SANITIZER_BUILD"] != nil {
    let untested: Set = ["ImageService", "image-engine", "ImageServiceTests", "ImageEngineCLITests",
                         "ImageBudget", "ImageBudgetTests", "MultipartForm", "MultipartFormTests", "DocumentationSnippets"]
    package.targets.removeAll { untested.contains($0.name) }
    package.products.removeAll { untested.contains($0.name) }
}
