import ArgumentParser
import Foundation
import ImageCache
import ImageCodec
import ImagePipeline

/// `image-engine fetch URL... --output DIR`: load images through one pipeline and save them.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Download images through the image pipeline (caches, coalescing, revalidation) and save them.",
        discussion: """
            Each URL becomes DIR/<last path component without extension>.jpg (.png when the image has \
            alpha); names that repeat for different URLs get -2, -3. URLs are fetched concurrently \
            through one pipeline, so a URL given twice is one request and one file. Errors: one line \
            per URL on stderr, or with --json a {"url","error"} line on stdout. The exit status is 1 if \
            any URL failed, 64 for a usage mistake.

            Examples:
              image-engine fetch https://example.com/p/1.jpg --output out --size 400x0
              image-engine fetch URL... --output out --cache-dir ~/.cache/images --json
            """
    )

    @Argument(help: ArgumentHelp("http or https URLs of JPEG, PNG, WebP, HEIC or AVIF images.", valueName: "url"))
    var urls: [String]

    @Option(name: .long, help: ArgumentHelp("Directory for the images (created if missing).", valueName: "dir"))
    var output: String

    @OptionGroup(title: "Size")
    var size: ResizeArguments

    @Option(name: .long, help: ArgumentHelp("Disk cache directory; without it nothing touches the disk but the outputs.", valueName: "dir"))
    var cacheDir: String?

    @Flag(name: .long, help: "Ignore cached copies: download everything again and replace the cache (reloadIgnoringCache).")
    var reload = false

    @Option(name: .long, help: ArgumentHelp("Seconds a download may take, from request to last byte.", valueName: "seconds"))
    var timeout: Double = 30

    @Flag(name: .long, help: "Print one JSON line per URL, in argument order: url, output, width, height, source, bytesDownloaded, milliseconds.")
    var json = false

    func validate() throws {
        if !(timeout > 0 && timeout.isFinite) { throw ValidationError("--timeout must be a positive number of seconds") }
        for url in urls {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                throw ValidationError("not an http or https URL: \(url)")
            }
        }
    }

    struct Success: Encodable {
        var url: String
        var output: String
        var width: Int
        var height: Int
        var source: String
        var bytesDownloaded: Int
        var milliseconds: Double
    }

    struct Failure: Error, Encodable {
        var url: String
        var error: String
    }

    func run() async throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        try Output.failing { () throws(ImageCodecError) in try FileBytes.createDirectory(directory) }
        let disk = try cacheDir.map { path in
            try Output.failing { () throws(DiskCacheError) in try DiskCache(directory: URL(fileURLWithPath: path, isDirectory: true)) }
        }
        let loader = URLSessionDataLoader(
            configuration: .init(
                connectTimeout: min(timeout, 10), idleTimeout: min(timeout, 15),
                requestTimeout: timeout))
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, diskCache: disk, fastShrinkOnLoad: size.fastShrinkOnLoad))
        let unique = urls.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let stems = Self.stems(for: unique)
        let policy: ImageRequest.CachePolicy = reload ? .reloadIgnoringCache : .useCache
        let resize = try size.resize()
        let results = await withTaskGroup(of: (String, Result<Success, Failure>).self) { group in
            for (url, stem) in zip(unique, stems) {
                group.addTask {
                    (url, await Self.fetch(url, stem: stem, into: directory, pipeline: pipeline, resize: resize, policy: policy))
                }
            }
            return await group.reduce(into: [String: Result<Success, Failure>]()) { $0[$1.0] = $1.1 }
        }
        // The disk cache writes after delivering: without waiting for it, a write still queued
        // when the process exits is lost, and the next run downloads again.
        await pipeline.flushDiskWrites()
        var failed = false
        for url in urls {
            switch results[url] {
            case .success(let success)?:
                if json { Output.jsonLine(success) }
            case .failure(let failure)?:
                failed = true
                if json { Output.jsonLine(failure) } else { Output.error("\(url): \(failure.error)") }
            case nil:
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// Loads one URL and writes it; the result is the JSON line for it.
    private static func fetch(
        _ url: String, stem: String, into directory: URL, pipeline: ImagePipeline, resize: Resize?,
        policy: ImageRequest.CachePolicy
    ) async -> Result<Success, Failure> {
        let start = ContinuousClock.now
        guard let parsed = URL(string: url) else { return .failure(Failure(url: url, error: "invalid URL")) }
        do {
            let response = try await pipeline.image(for: ImageRequest(url: parsed, resize: resize, cachePolicy: policy))
            let bitmap = response.bitmap
            let format: ImageFormat = bitmap.format.hasAlpha ? .png : .jpeg
            let file = directory.appendingPathComponent(stem).appendingPathExtension(format.fileExtension)
            do {
                try FileBytes.writeAtomically(try ImageEncoder.encode(bitmap, as: format), to: file)
            } catch {
                return .failure(Failure(url: url, error: error.description))
            }
            let milliseconds = ((ContinuousClock.now - start) / .milliseconds(1) * 10).rounded() / 10
            return .success(
                Success(
                    url: url, output: file.path, width: bitmap.width, height: bitmap.height,
                    source: response.source.rawValue, bytesDownloaded: response.bytesDownloaded,
                    milliseconds: milliseconds))
        } catch {
            return .failure(Failure(url: url, error: error.description))
        }
    }

    /// File names (without extension) from the URLs' last path components, made safe (never a
    /// path: no `/`, no leading dot) and unique in argument order with `-2`, `-3`, ...
    static func stems(for urls: [String]) -> [String] {
        var used = Set<String>()
        return urls.map { url in
            let component = URL(string: url)?.deletingPathExtension().lastPathComponent ?? ""
            var base = String(component.map { $0 == "/" || $0 == "\0" || $0 == "\\" ? "_" : $0 })
            while base.hasPrefix(".") { base.removeFirst() }
            if base.isEmpty { base = "image" }
            base = String(base.prefix(200))
            var name = base
            var counter = 2
            while used.contains(name.lowercased()) {
                name = "\(base)-\(counter)"
                counter += 1
            }
            used.insert(name.lowercased())
            return name
        }
    }
}
