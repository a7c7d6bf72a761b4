import Foundation

/// One line of the journal that records the cache's contents and use order, after Android's
/// DiskLruCache: opening replays it to know the least-recently-used order without reading
/// every entry.
///
/// `DIRTY name` before an entry is written, `CLEAN name size` once it is in place, `READ name`
/// when it is used, `REMOVE name` when it is gone, `LIMIT bytes` when the size limit is set.
/// A `DIRTY` with no later `CLEAN`/`REMOVE` marks a write that was interrupted. Sizes are
/// informative only: opening takes sizes from the file system, never from these lines.
enum JournalRecord: Hashable {
    case dirty(String)
    case clean(String, size: Int)
    case read(String)
    case remove(String)
    case limit(Int)

    var line: String {
        switch self {
        case .dirty(let name): "DIRTY \(name)\n"
        case .clean(let name, let size): "CLEAN \(name) \(size)\n"
        case .read(let name): "READ \(name)\n"
        case .remove(let name): "REMOVE \(name)\n"
        case .limit(let bytes): "LIMIT \(bytes)\n"
        }
    }
}

enum Journal {
    static let header = "image-engine-disk-cache 1\n"
    static let fileName = "journal"
    static let temporaryFileName = "journal.tmp"
    /// Larger journals are treated as damaged (the index is rebuilt from the entry files):
    /// compaction keeps a healthy one far below this.
    static let maximumSize = 128 << 20

    /// Records of a journal file, or nil when it is not one (missing or damaged header). A line
    /// without its final newline is a record torn by a crash and is dropped, as are lines that
    /// do not parse.
    static func parse(_ data: Data) -> [JournalRecord]? {
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix(header) else { return nil }
        var lines = text.dropFirst(header.count).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast() // after the final newline: empty, or a torn record
        return lines.compactMap(record)
    }

    private static func record(_ line: Substring) -> JournalRecord? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 2 else { return nil }
        if fields[0] == "LIMIT", fields.count == 2 {
            return Int(fields[1]).flatMap { $0 > 0 ? .limit($0) : nil }
        }
        let name = String(fields[1])
        guard DiskCacheKey.isEntryName(name) else { return nil }
        switch (fields[0], fields.count) {
        case ("DIRTY", 2): return .dirty(name)
        case ("CLEAN", 3): return Int(fields[2]).flatMap { $0 >= 0 ? .clean(name, size: $0) : nil }
        case ("READ", 2): return .read(name)
        case ("REMOVE", 2): return .remove(name)
        default: return nil
        }
    }

    static func encode(_ records: [JournalRecord]) -> Data {
        Data(records.map(\.line).joined().utf8)
    }
}
