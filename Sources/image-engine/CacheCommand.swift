import ArgumentParser
import Foundation
import ImageCache
import ImageCodec

/// `image-engine cache --dir DIR [--size-limit BYTES] <put|put-dir|get|stats|verify|clear>`.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Maintain a disk cache directory.",
        subcommands: [Put.self, PutDirectory.self, Get.self, Stats.self, Verify.self, Clear.self]
    )

    @Option(name: .long, help: "Cache directory (created if missing).")
    var dir: String

    @Option(name: .long, help: "Size limit in bytes; least recently used entries are evicted beyond it.")
    var sizeLimit: Int = DiskCacheConfiguration().sizeLimit

    func validate() throws {
        if sizeLimit < 1 { throw ValidationError("--size-limit must be positive") }
    }

    /// Opens the cache, turning failures into a message and exit status 1.
    func open() throws -> DiskCache {
        do {
            return try DiskCache(directory: dir, configuration: DiskCacheConfiguration(sizeLimit: sizeLimit))
        } catch {
            Output.error(error.description)
            throw ExitCode(1)
        }
    }

    struct Put: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "put", abstract: "Store FILE's bytes under KEY.")
        @ParentCommand var cache: CacheCommand
        @Argument var key: String
        @Argument var file: String

        func run() throws {
            let disk = try cache.open()
            try CacheCommand.report {
                try disk.store(try CacheCommand.read(file), forKey: key)
            }
        }
    }

    struct PutDirectory: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "put-dir", abstract: "Store every file in SRCDIR, keyed by its file name.")
        @ParentCommand var cache: CacheCommand
        @Argument var sourceDirectory: String
        @Flag(name: .long, help: "Print \"stored KEY\" as each entry is stored.") var verbose = false

        func run() throws {
            let disk = try cache.open()
            let names = try CacheCommand.report { try FileManager.default.contentsOfDirectory(atPath: sourceDirectory).sorted() }
            var failed = false
            for name in names {
                let path = URL(fileURLWithPath: sourceDirectory).appendingPathComponent(name).path
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
                do {
                    try disk.store(try CacheCommand.read(path), forKey: name)
                    // Unbuffered, so a reader knows exactly which stores returned before a kill.
                    if verbose { FileHandle.standardOutput.write(Data("stored \(name)\n".utf8)) }
                } catch {
                    failed = true
                    Output.error("\(path): \(error)")
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Write the bytes stored under KEY to FILE; exit 1 on a miss.")
        @ParentCommand var cache: CacheCommand
        @Argument var key: String
        @Option(name: .long, help: "Where to write the bytes.") var output: String

        func run() throws {
            let disk = try cache.open()
            guard let data = try CacheCommand.report({ try disk.data(forKey: key) }) else {
                Output.error("miss: \(key)")
                throw ExitCode(1)
            }
            try CacheCommand.report { try FileBytes.writeAtomically(data, to: URL(fileURLWithPath: output)) }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stats", abstract: "Print count, totalBytes and sizeLimit as JSON.")
        @ParentCommand var cache: CacheCommand

        func run() throws {
            let statistics = try cache.open().statistics
            Output.pretty(["count": statistics.count, "totalBytes": statistics.totalBytes, "sizeLimit": statistics.sizeLimit])
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "verify", abstract: "Check every entry, repair, and print a JSON report.")
        @ParentCommand var cache: CacheCommand

        func run() throws {
            let disk = try cache.open()
            Output.pretty(try CacheCommand.report { try disk.verify() })
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every entry.")
        @ParentCommand var cache: CacheCommand

        func run() throws {
            let disk = try cache.open()
            try CacheCommand.report { try disk.removeAll() }
        }
    }

    /// Runs `body`, printing any error as one line and exiting with status 1.
    static func report<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            Output.error("\(error)")
            throw ExitCode(1)
        }
    }

    static func read(_ path: String) throws -> Data {
        try FileBytes.read(URL(fileURLWithPath: path))
    }
}
