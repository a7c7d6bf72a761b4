import Foundation

/// Internal parsers opened to the fuzz targets in `Fuzz/` (`@_spi(Fuzzing) import ImageCache`):
/// not API, and absent from the documentation.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// An entry file's key, metadata and bytes, or nil when it is not an intact entry.
    public static func decodeEntryFile(_ file: Data) -> DiskCacheEntry? {
        var file = file
        return EntryFile.decode(&file)
    }

    /// The bytes of the entry file for `data` under `key` (to build directories to replay).
    public static func encodeEntryFile(key: String, data: Data) -> Data {
        EntryFile.encode(key: key, metadata: DiskCacheMetadata(), data: data).reduce(Data(), +)
    }

    /// The number of records of a journal file, or nil when it is not one.
    public static func parseJournal(_ data: Data) -> Int? {
        Journal.parse(data)?.count
    }
}
