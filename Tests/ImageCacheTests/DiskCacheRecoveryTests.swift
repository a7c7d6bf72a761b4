import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Disk cache recovery")
struct DiskCacheRecoveryTests {
    typealias Fixture = DiskCacheFixture

    static func appendToJournal(_ directory: TemporaryDirectory, _ text: String) throws {
        let journal = try FileHandle(forWritingTo: directory.file("journal"))
        journal.seekToEndOfFile()
        journal.write(Data(text.utf8))
        try journal.close()
    }

    @Test("opening removes temporary files and junk, drops entries whose file is gone, ignores a torn journal line")
    func recoveryOnOpen() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory)
            for index in 0..<3 { try cache.setValue(payload(index, size: 1000), forKey: "k\(index)") }
        }
        let root = directory.url.path
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: root + "/entries/" + String(repeating: "a", count: 64)))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: root + "/tmp/" + DiskCache.entryFileName(forKey: "k9") + ".1.1"))
        try FileManager.default.removeItem(atPath: Fixture.path(of: "k1", in: directory))
        // A DIRTY line for an entry never written, then a line torn in the middle of a name
        // (the process killed mid-append): neither may cost an intact entry.
        let torn = String(DiskCache.entryFileName(forKey: "k2").prefix(20))
        try Self.appendToJournal(directory, "DIRTY \(DiskCache.entryFileName(forKey: "k5"))\nCLEAN \(torn)")

        let cache = try Fixture.open(directory)
        #expect(try cache.value(forKey: "k0") == payload(0, size: 1000))
        #expect(try cache.value(forKey: "k1") == nil)
        #expect(try cache.value(forKey: "k2") == payload(2, size: 1000))
        #expect(cache.statistics.count == 2)
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        #expect(Fixture.entryFiles(directory).count == 2)
        #expect(Fixture.temporaryFiles(directory).isEmpty)
        let report = try cache.verify()
        #expect(
            report.orphans.sorted() == [
                "entries/" + String(repeating: "a", count: 64),
                "tmp/" + DiskCache.entryFileName(forKey: "k9") + ".1.1"
            ])
        #expect(report.missing == [DiskCache.entryFileName(forKey: "k1")])
        #expect(report.valid == 2 && report.corrupt.isEmpty)
    }

    @Test("a damaged journal header loses the order, never the entries: they are rebuilt from the files", arguments: ["header", "deleted", "binary"])
    func damagedJournal(_ damage: String) throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory)
            for index in 0..<6 { try cache.setValue(payload(index, size: 2000 + index), forKey: "k\(index)") }
        }
        let journal = directory.file("journal")
        switch damage {
        case "header":
            var text = try String(contentsOf: journal, encoding: .utf8)
            text.replaceSubrange(text.startIndex..<text.index(text.startIndex, offsetBy: 5), with: "XXXXX")
            try text.write(to: journal, atomically: false, encoding: .utf8)
        case "deleted": try FileManager.default.removeItem(at: journal)
        default: try payload(9, size: 500).write(to: journal)
        }
        // A file with an entry's name whose header does not add up is not an entry.
        try payload(7, size: 300).write(to: URL(fileURLWithPath: directory.url.path + "/entries/" + String(repeating: "b", count: 64)))

        let cache = try Fixture.open(directory)
        for index in 0..<6 { #expect(try cache.value(forKey: "k\(index)") == payload(index, size: 2000 + index)) }
        #expect(cache.statistics.count == 6)
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        #expect(!Fixture.entryFiles(directory).contains(String(repeating: "b", count: 64)))
    }

    @Test("sizes come from the file system: absurd CLEAN sizes in the journal neither crash nor count")
    func absurdJournalSizes() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory)
            try cache.setValue(payload(1, size: 3000), forKey: "a")
            try cache.setValue(payload(2, size: 3000), forKey: "b")
        }
        let name = DiskCache.entryFileName(forKey: "a")
        try Self.appendToJournal(directory, "CLEAN \(name) 9223372036854775807\nCLEAN \(name) 9223372036854775807\nCLEAN \(name) -5\n")
        for _ in 0..<2 { // and again after the journal was compacted
            let cache = try Fixture.open(directory, limit: nil)
            #expect(cache.statistics.count == 2)
            #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
            #expect(try cache.value(forKey: "a") == payload(1, size: 3000))
        }
    }

    @Test("killed after the rename but before CLEAN: the reopened cache counts the new file's real size")
    func killedBeforeClean() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory)
            try cache.setValue(payload(1, size: 2000), forKey: "k")
        }
        // The new, larger version made by another cache, put in place as the rename would.
        let other = try TemporaryDirectory()
        do { try Fixture.open(other).setValue(payload(2, size: 200_000), forKey: "k") }
        let path = Fixture.path(of: "k", in: directory)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: Fixture.path(of: "k", in: other), toPath: path)
        try Self.appendToJournal(directory, "DIRTY \(DiskCache.entryFileName(forKey: "k"))\n")

        let cache = try Fixture.open(directory, limit: nil)
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        #expect(cache.statistics.totalBytes > 200_000)
        #expect(try cache.value(forKey: "k") == payload(2, size: 200_000))
        #expect(try cache.verify().totalBytes == Fixture.bytesOnDisk(directory.url))
    }

    @Test("a journal rewrite during a store keeps its DIRTY record, and verify leaves its temporary file alone")
    func rewriteDuringStore() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let cache = try Fixture.open(directory, fileSystem: fileSystem)
        let name = DiskCache.entryFileName(forKey: "slow")
        let gate = fileSystem.pause(after: .write, matching: "tmp/" + name)
        let store = ThreadRun { try cache.setValue(payload(5, size: 50_000), forKey: "slow") }
        #expect(gate.waitUntilReached())
        _ = try cache.verify() // rewrites the journal while the store is between DIRTY and CLEAN
        let journal = try String(contentsOf: directory.file("journal"), encoding: .utf8)
        #expect(journal.hasSuffix("DIRTY \(name)\n"), "journal after rewrite: \(journal)")
        #expect(Fixture.temporaryFiles(directory).count == 1)
        gate.release()
        try store.value()
        #expect(try cache.value(forKey: "slow") == payload(5, size: 50_000))
        #expect(try String(contentsOf: directory.file("journal"), encoding: .utf8).contains("CLEAN \(name) "))
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
    }

    @Test("a reader that finds a damaged version removes that version only, never one stored meanwhile", arguments: ["damaged", "expired"])
    func removalIsByVersion(_ reason: String) throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let clock = ManualClock()
        let cache = try Fixture.open(directory, fileSystem: fileSystem, clock: clock)
        try cache.setValue(payload(1, size: 4000), forKey: "k", metadata: DiskCacheMetadata(expires: clock.now + 10))
        if reason == "damaged" {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: Fixture.path(of: "k", in: directory)))
            bytes[bytes.count - 1] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: Fixture.path(of: "k", in: directory)))
        } else {
            clock.advance(by: 11)
        }
        let gate = fileSystem.pause(after: .read, matching: DiskCache.entryFileName(forKey: "k"))
        let reader = ThreadRun { try cache.value(forKey: "k") }
        #expect(gate.waitUntilReached()) // the reader holds the old version's bytes
        try cache.setValue(payload(2, size: 4000), forKey: "k", metadata: DiskCacheMetadata(expires: clock.now + 100))
        gate.release()
        #expect(try reader.value() == nil)
        #expect(try cache.value(forKey: "k") == payload(2, size: 4000))
        #expect(FileManager.default.fileExists(atPath: Fixture.path(of: "k", in: directory)))
    }

    @Test("the directory removed underneath is recreated on the next write, and the process lock is taken again on it")
    func directoryRemoved() throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory)
        try cache.setValue(payload(1, size: 2000), forKey: "old")
        try FileManager.default.removeItem(at: directory.url)
        #expect(try cache.value(forKey: "old") == nil)
        try cache.setValue(payload(2, size: 2000), forKey: "new")
        #expect(try cache.value(forKey: "new") == payload(2, size: 2000))
        #expect(cache.statistics.count == 1)
        #expect(throws: DiskCacheError.locked(directory: directory.url)) { try Fixture.open(directory) }
    }
}
