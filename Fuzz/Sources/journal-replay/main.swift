@_spi(Fuzzing) import ImageCache
import Foundation
import FuzzSupport

// Opening a cache directory whose journal is the input: replay, reconciliation with the entry
// files, compaction, verify. Two real entries are put back each time, so the replay has names
// to find.
@_cdecl("journal_replay_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        _ = FuzzingEntryPoints.parseJournal(input)
        JournalScene.shared.replay(input)
        return 0
    }
}

final class JournalScene: @unchecked Sendable {
    static let shared = JournalScene()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-journal-\(getpid())")
    let keys = ["https://cdn.example.com/a.jpg", "b"]
    /// Arrays, not `Data`: a `Data` kept for the whole run hides its storage pointer in spare
    /// bits, and LeakSanitizer then reports it as leaked at exit.
    let entries: [(name: String, bytes: [UInt8])]

    init() {
        try? FileManager.default.removeItem(at: root)
        entries = keys.enumerated().map { index, key in
            (DiskCache.entryFileName(forKey: key),
             [UInt8](FuzzingEntryPoints.encodeEntryFile(key: key, data: Data(repeating: UInt8(index), count: 100 + index))))
        }
    }

    func replay(_ journal: Data) {
        let directory = root.appendingPathComponent("cache")
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.createDirectory(at: directory.appendingPathComponent("entries"), withIntermediateDirectories: true)
        for entry in entries { try? Data(entry.bytes).write(to: directory.appendingPathComponent("entries/" + entry.name)) }
        try? journal.write(to: directory.appendingPathComponent("journal"))
        guard let cache = try? DiskCache(directory: directory) else { return }
        for key in keys { _ = try? cache.value(forKey: key) }
        _ = try? cache.verify()
        let statistics = cache.statistics
        if statistics.count > entries.count || statistics.totalBytes > entries.reduce(0, { $0 + $1.bytes.count }) {
            fatalError("the cache counts more than the directory holds: \(statistics)")
        }
    }
}
