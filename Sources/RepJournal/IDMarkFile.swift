import PlainText

/// The ids a journal file handed out, remembered outside it: `PATH.ids` beside the journal at `PATH`.
///
/// The reservation in the file (see `EventJournal`) cannot tell that the file itself went back in time: a backup put
/// back (`mv backup.db events.db`, `cp backup.db events.db`) holds its own, older reservation and the same identity,
/// and the ids after its newest event would be handed out again for other events under that identity, which
/// consumers that de-duplicate by station + journal + id would drop. This file keeps, per identity, what the last
/// run reserved (`clean`: what it handed out, written at its close) and which file it wrote (device and inode). It is
/// written with every reservation (once per id block and at close: write a new file, fsync it, rename it over the
/// old one, fsync the folder), never per event, and holds the 8 identities written last.
///
/// Text, one line per identity: `IDENTITY RESERVED clean|open DEVICE INODE`. A line that does not read is ignored,
/// and so is a file that cannot be read, is not a regular file (a FIFO is not waited on) or is over 16 KiB: then only
/// the reservation in the journal counts, as before this file.
struct IDMarkFile {
    /// What one run of one identity reserved or handed out.
    struct Mark: Equatable {
        /// Ids up to this one may have been handed out (`clean`: exactly those were).
        var reserved: Int64
        /// Written at a clean close: `reserved` is the newest id handed out.
        var clean: Bool
        /// The journal file written (its device and inode).
        var device: UInt64
        var inode: UInt64

        /// The journal file written.
        var file: FileIdentity { FileIdentity(device: device, inode: inode) }
    }

    /// The mark file's path.
    let path: String
    /// How many identities it keeps.
    static let capacity = 8
    /// The largest mark file read (`capacity` lines are under 1 KiB): a larger one is not a mark file, ignored.
    static let maximumSize = 16 * 1024

    /// The mark file of the journal at `journalPath`.
    init(journalPath: String) { path = journalPath + ".ids" }

    /// The marks by identity, newest first; empty when the file is missing or cannot be read.
    func read() -> [(identity: String, mark: Mark)] {
        // A regular file only: `fopen` of a FIFO put there waited for a writer, and repd's start with it.
        guard let bytes = try? TextFile.readBytes(path, limit: Self.maximumSize) else { return [] }
        var marks: [(identity: String, mark: Mark)] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 5, words[0].count == 32, words[0].allSatisfy(\.isHexDigit),
                let reserved = Int64(words[1]), reserved >= 0, words[2] == "clean" || words[2] == "open",
                let device = UInt64(words[3]), let inode = UInt64(words[4]),
                !marks.contains(where: { $0.identity == words[0] })
            else { continue }
            marks.append(
                (String(words[0]), Mark(reserved: reserved, clean: words[2] == "clean", device: device, inode: inode)))
        }
        return marks
    }

    /// The mark of `identity`, nil when there is none.
    func mark(of identity: String) -> Mark? { read().first { $0.identity == identity }?.mark }

    /// Records `mark` for `identity` (first, with the other identities after it, at most `capacity`). Returns why it
    /// could not be written, nil when it was.
    func write(_ mark: Mark, for identity: String) -> String? {
        var marks = read().filter { $0.identity != identity }
        marks.insert((identity, mark), at: 0)
        let text = marks.prefix(Self.capacity).map { entry in
            "\(entry.identity) \(entry.mark.reserved) \(entry.mark.clean ? "clean" : "open") \(entry.mark.device) \(entry.mark.inode)\n"
        }.joined()
        do { try TextFile.replaceDurably(text, at: path) } catch { return error.description }
        return nil
    }
}
