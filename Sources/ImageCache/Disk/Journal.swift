import Foundation

/// The append-only journal that records the cache's contents and use order, after Android's
/// DiskLruCache: opening replays it instead of stat-ing every file.
///
/// One record per line: `DIRTY name` before an entry is written, `CLEAN name size` once it
/// is in place, `READ name` when it is used, `REMOVE name` when it is gone. A `DIRTY` with no
/// later `CLEAN`/`REMOVE` marks a write that was interrupted. A line without its final
/// newline is a record torn by a crash and is ignored.
enum JournalRecord: Hashable {
    case dirty(String)
    case clean(String, size: Int)
    case read(String)
    case remove(String)

    var line: String {
        switch self {
        case .dirty(let name): "DIRTY \(name)\n"
        case .clean(let name, let size): "CLEAN \(name) \(size)\n"
        case .read(let name): "READ \(name)\n"
        case .remove(let name): "REMOVE \(name)\n"
        }
    }
}

enum Journal {
    static let header = "image-engine-disk-cache 1\n"

    /// Records of a journal file, or nil when it is not one (wrong header).
    static func parse(_ data: Data) -> [JournalRecord]? {
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix(header) else { return data.isEmpty ? [] : nil }
        var lines = text.dropFirst(header.count).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the final newline: empty, or a torn record
        return lines.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 2, DiskCacheKey.isEntryName(String(fields[1])) else { return nil }
            let name = String(fields[1])
            switch (fields[0], fields.count) {
            case ("DIRTY", 2): return .dirty(name)
            case ("CLEAN", 3): return Int(fields[2]).flatMap { $0 >= 0 ? .clean(name, size: $0) : nil }
            case ("READ", 2): return .read(name)
            case ("REMOVE", 2): return .remove(name)
            default: return nil
            }
        }
    }

    static func encode(_ records: [JournalRecord]) -> Data {
        Data(records.map(\.line).joined().utf8)
    }
}
