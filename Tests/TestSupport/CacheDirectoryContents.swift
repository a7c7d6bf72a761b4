import Foundation

/// What a disk cache directory really holds, read with Foundation (independently of the cache's
/// own file-system code), to check the cache's accounting against.
public enum CacheDirectoryContents {
    /// Names in `directory/entries`, sorted.
    public static func entryFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("entries").path)) ?? []).sorted()
    }

    /// Names in `directory/tmp`, sorted.
    public static func temporaryFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)) ?? []).sorted()
    }

    /// Bytes of the files in `directory/entries` as the file system reports them.
    public static func bytesOnDisk(_ directory: URL) -> Int {
        let entries = directory.appendingPathComponent("entries").path
        return entryFiles(directory).reduce(0) { total, name in
            total + (((try? FileManager.default.attributesOfItem(atPath: entries + "/" + name))?[.size] as? Int) ?? 0)
        }
    }
}
