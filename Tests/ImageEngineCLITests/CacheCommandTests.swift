import Foundation
import ImageCache
import Testing
import TestSupport

@Suite("CLI: cache command")
struct CacheCommandTests {
    /// A cache directory filled with 10 entries of 1-10 KB through the CLI.
    struct Filled {
        let root: TemporaryDirectory
        var cache: String { root.url.path + "/cache" }
        var source: URL { root.url.appendingPathComponent("source") }

        init() async throws {
            root = try TemporaryDirectory()
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            for index in 0..<10 {
                try Data(repeating: UInt8(index), count: 1000 * (index + 1)).write(to: source.appendingPathComponent("f\(index)"))
            }
            let outcome = try await CLIRunner.run(["cache", "--dir", cache, "put-dir", source.path])
            #expect(outcome.status == 0, "\(outcome.stderr)")
        }

        func stats(_ extra: [String] = []) async throws -> [String: Int] {
            let outcome = try await CLIRunner.run(["cache", "--dir", cache] + extra + ["stats"])
            return try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Int], "\(outcome.stderr)")
        }
    }

    @Test("stats and get with a smaller --size-limit evict nothing; the recorded limit is reported")
    func readOnlyCommandsNeverEvict() async throws {
        let filled = try await Filled()
        #expect(try await filled.stats(["--size-limit", "3000"])["count"] == 10)
        let output = filled.root.file("out")
        let get = try await CLIRunner.run(["cache", "--dir", filled.cache, "--size-limit", "3000", "get", "f0", "--output", output.path])
        #expect(get.status == 0 && get.stderr.contains("--size-limit applies to put, put-dir and clear"))
        let verify = try await CLIRunner.run(["cache", "--dir", filled.cache, "--size-limit", "3000", "verify"])
        #expect(verify.status == 0)
        let stats = try await filled.stats()
        #expect(stats["count"] == 10 && stats["sizeLimit"] == 256 << 20)
    }

    @Test("a put rejected for --size-limit changes nothing; an accepted one (given as 25KB) records the new limit")
    func rejectedPutChangesNothing() async throws {
        let filled = try await Filled()
        let before = try await filled.stats()
        let rejected = try await CLIRunner.run([
            "cache", "--dir", filled.cache, "--size-limit", "10", "put", "big", filled.source.appendingPathComponent("f9").path
        ])
        #expect(rejected.status == 1 && rejected.stderr.contains("exceeds the cache size limit of 10 bytes"))
        #expect(try await filled.stats() == before)
        let accepted = try await CLIRunner.run([
            "cache", "--dir", filled.cache, "--size-limit", "25KB", "put", "small", filled.source.appendingPathComponent("f0").path
        ])
        #expect(accepted.status == 0)
        let after = try await filled.stats()
        #expect(after["sizeLimit"] == 25000 && (after["totalBytes"] ?? .max) <= 25000)
        #expect(after["totalBytes"] == CacheDirectoryContents.bytesOnDisk(URL(fileURLWithPath: filled.cache)))
    }

    @Test("through the CLI, a tmp/ linked to another directory and a FIFO entry neither delete outside nor hang")
    func hostileDirectory() async throws {
        let filled = try await Filled()
        let outside = filled.root.url.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: outside.appendingPathComponent("keep.txt"))
        try FileManager.default.removeItem(atPath: filled.cache + "/tmp")
        try FileManager.default.createSymbolicLink(atPath: filled.cache + "/tmp", withDestinationPath: outside.path)
        let fifo = filled.cache + "/entries/" + DiskCache.entryFileName(forKey: "f3")
        try FileManager.default.removeItem(atPath: fifo)
        #expect(mkfifo(fifo, 0o644) == 0)
        let get = try await CLIRunner.run(["cache", "--dir", filled.cache, "get", "f3", "--output", filled.root.file("o").path])
        #expect(get.status == 1 && get.stderr.contains("miss: f3"))
        let verify = try await CLIRunner.run(["cache", "--dir", filled.cache, "verify"])
        #expect(verify.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["keep.txt"])
        #expect(try await filled.stats()["count"] == 9)
    }

    @Test("errors are one line naming the path and the reason, never a Foundation dump")
    func errorMessages() async throws {
        let root = try TemporaryDirectory()
        let missing = try await CLIRunner.run(["cache", "--dir", root.url.path + "/c", "put-dir", root.url.path + "/nope"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "image-engine: \(root.url.path)/nope: No such file or directory\n")
        let directoryAsFile = try await CLIRunner.run(["cache", "--dir", root.url.path + "/c", "put", "k", root.url.path])
        #expect(directoryAsFile.status == 1 && directoryAsFile.stderr == "image-engine: \(root.url.path): is a directory, not a file\n")
        let noDir = try await CLIRunner.run(["cache", "stats"])
        #expect(noDir.status == 64 && noDir.stderr.contains("Missing expected argument '--dir <dir>'"))
        let help = try await CLIRunner.run(["cache", "put", "--help"])
        #expect(help.status == 0 && help.stdout.contains("The key to store the bytes under"))
    }
}
