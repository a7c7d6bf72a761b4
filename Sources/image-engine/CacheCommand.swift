import ArgumentParser
import Foundation
import ImageCache
import ImageCodec

/// `image-engine cache --dir DIR [--size-limit SIZE] <put|put-dir|get|stats|verify|clear>`.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Maintain a disk cache directory.",
        discussion: """
            The size limit is a property of the directory: --size-limit records a new one with put, \
            put-dir and clear (evicting least recently used entries beyond it); get, stats and verify \
            never evict and report the recorded limit. Errors are one line on stderr; the exit status \
            is 1 when an operation failed, 64 for a usage mistake.

            Examples:
              image-engine cache --dir ~/.cache/images put https://ex.com/1.jpg 1.jpg
              image-engine cache --dir ~/.cache/images verify
              image-engine cache --dir ~/.cache/images --size-limit 100MB clear
            """,
        subcommands: [Put.self, PutDirectory.self, Get.self, Stats.self, Verify.self, Clear.self]
    )

    // Optional only so that `cache put --help` can show the subcommand's help without it;
    // `validate()` requires it for everything else.
    @Option(name: .long, help: ArgumentHelp("Cache directory (created if missing). Required.", valueName: "dir"))
    var dir: String?

    @Option(
        name: .customLong("size-limit"),
        help: ArgumentHelp(
            "New size limit for the directory (put, put-dir and clear): 100MB, 256MiB, 1GB or bytes. Default: the directory's recorded limit, 256 MiB for a new one.",
            valueName: "size"))
    var sizeLimitArgument: ByteCount?

    /// The limit in bytes; at least one (`ByteCount` refuses less).
    var sizeLimit: Int? { sizeLimitArgument?.bytes }

    var directory: URL { URL(fileURLWithPath: dir ?? ".", isDirectory: true) }

    /// Called by each subcommand's `validate()`: the parent cannot require `--dir` itself, or
    /// `cache put --help` would print the parent's help instead of the subcommand's.
    func requireDirectory() throws {
        if dir == nil { throw ValidationError("Missing expected argument '--dir <dir>'") }
    }

    /// The usage line of a subcommand, with the parent's options it needs.
    static func usage(_ subcommand: String) -> String {
        "image-engine cache --dir <dir> [--size-limit <size>] \(subcommand)"
    }

    /// Opens the cache for a command that writes: a `--size-limit` is recorded and applied.
    func openForWriting() throws -> DiskCache {
        try open(DiskCacheConfiguration(sizeLimit: sizeLimit))
    }

    /// Opens the cache for a command that only reads: the recorded limit applies, nothing is
    /// evicted.
    func openForReading() throws -> DiskCache {
        if sizeLimit != nil {
            Output.error("note: --size-limit applies to put, put-dir and clear; the directory's recorded limit is kept")
        }
        return try open(DiskCacheConfiguration())
    }

    private func open(_ configuration: DiskCacheConfiguration) throws -> DiskCache {
        try Output.failing { () throws(DiskCacheError) in try DiskCache(directory: directory, configuration: configuration) }
    }

    struct Put: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put", abstract: "Store FILE's bytes under KEY.", usage: CacheCommand.usage("put <key> <file>"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }
        @Argument(help: "The key to store the bytes under (any string, e.g. a URL).") var key: String
        @Argument(help: "The file whose bytes are stored.") var file: String

        func run() throws {
            let data = try Output.failing { () throws(ImageCodecError) in try FileBytes.read(URL(fileURLWithPath: file)) }
            // Checked before the cache is opened with the new limit, so a rejected put changes nothing.
            if let limit = cache.sizeLimit, DiskCache.storedSize(of: data, forKey: key) > limit {
                throw Output.failure(
                    DiskCacheError.entryTooLarge(key: key, size: DiskCache.storedSize(of: data, forKey: key), limit: limit).description)
            }
            let disk = try cache.openForWriting()
            try Output.failing { () throws(DiskCacheError) in try disk.setValue(data, forKey: key) }
        }
    }

    struct PutDirectory: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-dir", abstract: "Store every regular file in SRCDIR, keyed by its file name.",
            usage: CacheCommand.usage("put-dir <srcdir> [--verbose]"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }
        @Argument(help: ArgumentHelp("The directory whose files are stored (not recursively).", valueName: "srcdir"))
        var sourceDirectory: String
        @Flag(name: .long, help: "Print \"stored KEY\" as each entry is stored.") var verbose = false

        func run() throws {
            let names = try Output.failing { () throws(ImageCodecError) in
                try FileBytes.regularFileNames(in: URL(fileURLWithPath: sourceDirectory, isDirectory: true))
            }
            let disk = try cache.openForWriting()
            var failed = false
            for name in names.sorted() {
                let url = URL(fileURLWithPath: sourceDirectory, isDirectory: true).appendingPathComponent(name)
                do {
                    try disk.setValue(try FileBytes.read(url), forKey: name)
                    // Unbuffered, so a reader knows exactly which stores returned before a kill.
                    if verbose { FileHandle.standardOutput.write(Data("stored \(name)\n".utf8)) }
                } catch {
                    failed = true
                    Output.error("\(url.path): \(error)")
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Write the bytes stored under KEY to a file; exit 1 on a miss.",
            usage: CacheCommand.usage("get <key> --output <file>"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }
        @Argument(help: "The key the bytes were stored under.") var key: String
        @Option(name: .long, help: ArgumentHelp("Where to write the bytes (replaced atomically).", valueName: "file"))
        var output: String

        func run() throws {
            let disk = try cache.openForReading()
            guard let data = try Output.failing({ () throws(DiskCacheError) in try disk.value(forKey: key) }) else {
                throw Output.failure("miss: \(key)")
            }
            try Output.failing { () throws(ImageCodecError) in try FileBytes.writeAtomically(data, to: URL(fileURLWithPath: output)) }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats", abstract: "Print count, totalBytes and sizeLimit as JSON.", usage: CacheCommand.usage("stats"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }

        func run() throws {
            let statistics = try cache.openForReading().statistics
            Output.pretty(["count": statistics.count, "totalBytes": statistics.totalBytes, "sizeLimit": statistics.sizeLimit])
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify", abstract: "Check every entry, remove damaged ones and strays, and print a JSON report.",
            usage: CacheCommand.usage("verify"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }

        func run() throws {
            let disk = try cache.openForReading()
            Output.pretty(try Output.failing { () throws(DiskCacheError) in try disk.verify() })
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every entry.", usage: CacheCommand.usage("clear"))
        @ParentCommand var cache: CacheCommand
        func validate() throws { try cache.requireDirectory() }

        func run() throws {
            let disk = try cache.openForWriting()
            try Output.failing { () throws(DiskCacheError) in try disk.removeAll() }
        }
    }
}
