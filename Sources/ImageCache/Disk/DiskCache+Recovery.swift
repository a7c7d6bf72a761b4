import Foundation

/// Opening a cache directory: rebuilding the index from the files and the journal, removing
/// what does not belong, and checking every entry on request (`verify`).
extension DiskCache {
    struct Recovery {
        var report: DiskCacheVerificationReport
        /// The last `LIMIT` record, if the journal had one.
        var recordedLimit: Int?
        var journalWasValid: Bool
    }

    /// Builds the index (call with `lock` held). Sizes come from the file system, never from
    /// the journal; the journal only gives the order.
    ///
    /// - `tmp/` is emptied: nothing is in flight while the directory is being opened, so what
    ///   is there was left by a killed writer (or planted).
    /// - In `entries/`, anything that is not a regular file with an entry's name is removed.
    /// - Files the journal knows keep its order. Files it does not know (a journal that is
    ///   damaged, missing or lost its last records) are kept if their header is an entry's
    ///   header whose lengths match the file, oldest first at the least recent end, and removed
    ///   otherwise. The checksum is verified on every read, so nothing damaged is ever returned.
    func recover() throws(DiskCacheError) -> Recovery {
        var report = DiskCacheVerificationReport()
        index.removeAll()
        pendingReads.removeAll()
        readOnlyReason = layout.readOnlyReason
        do {
            for item in try layout.temporary.list() where !temporariesInFlight.contains(item.name) {
                if removeJunk(item.name, in: layout.temporary) { report.orphans.append(DiskCacheLayout.temporaryName + "/" + item.name) }
            }
            var present: [String: CacheFileStatus] = [:]
            for item in try layout.entries.list() {
                if item.kind == .regular && DiskCacheKey.isEntryName(item.name) {
                    present[item.name] = item
                } else if removeJunk(item.name, in: layout.entries) {
                    report.orphans.append(DiskCacheLayout.entriesName + "/" + item.name)
                }
            }
            let (records, journalWasValid) = try readJournal()
            var order = LRUList<String, Void>()
            // Names once stored completely: if their file is gone, that is worth reporting; a
            // name with only an interrupted write is not.
            var committed = Set<String>()
            var recordedLimit: Int?
            for record in records {
                switch record {
                case .dirty(let name), .read(let name), .clean(let name, _):
                    if order.touch(name) == nil { order.insert(name, value: (), cost: 0, expiry: nil) }
                    if case .clean = record { committed.insert(name) }
                case .remove(let name):
                    order.remove(name)
                    committed.remove(name)
                case .limit(let bytes): recordedLimit = bytes
                }
            }
            // Files the journal does not know: adopt intact ones (oldest first), remove the rest.
            let unknown = present.values.filter { order.peek($0.name) == nil }
                .sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
            for item in unknown {
                if hasEntryHeader(item) {
                    insert(item)
                } else if removeJunk(item.name, in: layout.entries) {
                    report.orphans.append(DiskCacheLayout.entriesName + "/" + item.name)
                }
            }
            for (name, _) in order.entriesFromLeastRecent {
                if let item = present[name] {
                    insert(item)
                } else if committed.contains(name) {
                    report.missing.append(name)
                }
            }
            report.checked = index.count
            return Recovery(report: report, recordedLimit: recordedLimit, journalWasValid: journalWasValid)
        } catch {
            throw .io(error)
        }
    }

    private func insert(_ item: CacheFileStatus) {
        index.insert(item.name, value: nextVersion, cost: item.size, expiry: nil)
        nextVersion += 1
    }

    /// The journal's records; none when it is missing, damaged or not a regular file.
    private func readJournal() throws(FileSystemError) -> (records: [JournalRecord], valid: Bool) {
        let data: Data
        do {
            data = try layout.root.readFile(Journal.fileName, maximumSize: Journal.maximumSize)
        } catch  where error.code == ENOENT || error.code == EFBIG {
            return ([], false)
        } catch  where error.code == FileSystemError.notRegularFile {
            _ = removeJunk(Journal.fileName, in: layout.root)
            return ([], false)
        }
        guard let records = Journal.parse(data) else { return ([], false) }
        return (records, true)
    }

    private func hasEntryHeader(_ item: CacheFileStatus) -> Bool {
        guard let prefix = try? layout.entries.readPrefix(of: item.name, count: EntryFile.headerSize) else { return false }
        return EntryFile.headerMatches(prefix, fileSize: item.size)
    }

    /// Removes `name`; on a read-only file system it stays (and is ignored). True if removed.
    private func removeJunk(_ name: String, in directory: any CacheDirectory) -> Bool {
        do {
            try directory.remove(name)
            return true
        } catch {
            return false
        }
    }

    /// Compacts the journal after recovery. When that fails for lack of space or rights, the
    /// cache still opens: it appends to the old journal if that was intact, or becomes
    /// read-only (reads work, stores throw `readOnly` until a retry succeeds).
    func openJournalAfterRecovery(recordedJournalIsValid: Bool) {
        guard readOnlyReason == nil else {
            journal = nil
            return
        }
        do {
            try rewriteJournal()
        } catch {
            if recordedJournalIsValid, let appending = try? layout.root.openForAppending(Journal.fileName) {
                journal = appending
                journalRecordCount = Int.max / 2 // compact again at the next write
            } else {
                journal = nil
                readOnlyReason = error
            }
        }
    }

    /// Reads and checks every entry, removes damaged ones and files no entry owns.
    ///
    /// Entries are read outside the lock, so stores and reads go on meanwhile; an entry
    /// replaced while it was being checked is left alone (removal is by version).
    public func verify() throws(DiskCacheError) -> DiskCacheVerificationReport {
        var (report, snapshot, entries, limit) = try lock.withLock {
            () throws(DiskCacheError) -> (DiskCacheVerificationReport, [(name: String, version: UInt64, size: Int)], any CacheDirectory, Int) in
            try ensureWritable()
            var report: DiskCacheVerificationReport
            do throws(FileSystemError) { report = try repairDirectory() } catch { throw .io(error) }
            if let earlier = repairsAtOpen {
                report.orphans = earlier.orphans + report.orphans
                report.missing = earlier.missing + report.missing
                repairsAtOpen = nil
            }
            let snapshot = index.entriesFromLeastRecent.compactMap { item in
                index.peek(item.key).map { (name: item.key, version: $0.value, size: item.cost) }
            }
            return (report, snapshot, layout.entries, sizeLimit)
        }
        for (name, version, size) in snapshot {
            let intact: Bool
            do throws(FileSystemError) {
                // As for reads: an entry stored before the limit was lowered may exceed it.
                var file = try entries.readFile(name, maximumSize: max(size, limit))
                intact = EntryFile.decode(&file).map { DiskCacheKey.fileName(for: $0.key) == name } ?? false
            } catch  where error.code == ENOENT {
                continue // removed or replaced meanwhile
            } catch  where error.code == FileSystemError.notRegularFile || error.code == EFBIG {
                intact = false
            } catch {
                throw .io(error)
            }
            if intact {
                report.valid += 1
                continue
            }
            try lock.withLock { () throws(DiskCacheError) in
                guard index.peek(name)?.value == version else { return }
                report.corrupt.append(name)
                counters.corruptEntriesRemoved += 1
                do throws(FileSystemError) { try removeLocked(name, version: version) } catch { throw .io(error) }
            }
        }
        return try lock.withLock { () throws(DiskCacheError) -> DiskCacheVerificationReport in
            do throws(FileSystemError) { try rewriteJournal() } catch { throw .io(error) }
            report.count = index.count
            report.totalBytes = index.totalCost
            return report
        }
    }

    /// For an open cache, whose index is authoritative: removes temporary files of no write in
    /// flight, anything in entries/ the index does not own (junk, and files planted meanwhile),
    /// and drops index entries whose file is gone. Call with `lock` held.
    private func repairDirectory() throws(FileSystemError) -> DiskCacheVerificationReport {
        var report = DiskCacheVerificationReport()
        try flushPendingReads()
        for item in try layout.temporary.list() where !temporariesInFlight.contains(item.name) {
            if removeJunk(item.name, in: layout.temporary) { report.orphans.append(DiskCacheLayout.temporaryName + "/" + item.name) }
        }
        var present = Set<String>()
        for item in try layout.entries.list() {
            if item.kind == .regular && index.peek(item.name) != nil {
                present.insert(item.name)
            } else if removeJunk(item.name, in: layout.entries) {
                report.orphans.append(DiskCacheLayout.entriesName + "/" + item.name)
            }
        }
        for (name, _) in index.entriesFromLeastRecent where !present.contains(name) {
            index.remove(name)
            report.missing.append(name)
        }
        report.checked = index.count
        return report
    }
}
