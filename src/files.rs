//! Files and folders only the server's own user may read: the data folder, the SQLite database,
//! the signing secret and the mail folder hold password hashes, the key to every token and
//! password-reset links. Their modes are set here whatever the umask, and loosened ones are
//! tightened when found (with a warning, since someone or something loosened them). Elsewhere
//! than on Unix there are no modes to set; the functions then only create what is missing.

use std::io;
use std::path::Path;

/// Owner only: read, write and enter.
#[cfg(unix)]
const PRIVATE_DIR: u32 = 0o700;
/// Owner only: read and write.
#[cfg(unix)]
const PRIVATE_FILE: u32 = 0o600;

/// Creates `path` and its missing parents, each of them private. A folder that already exists is
/// left alone: it may be a shared one such as `/tmp`, which is not ours to change.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        // The umask can only take bits away, so 0700 stays at most 0700.
        builder.mode(PRIVATE_DIR);
    }
    builder.create(path)
}

/// Creates the folder `path` (and its missing parents) private, or makes it private if it
/// exists: for the folders that are the server's own (the data folder, the mail folder).
pub fn private_dir(path: &Path) -> io::Result<()> {
    create_private_dir(path)?;
    tighten(path, "folder")
}

/// Makes the existing folder `path` private; a folder not there yet is left to be created
/// private when something is first put into it.
pub fn tighten_dir_if_present(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => tighten(path, "folder"),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates `path` as an empty private file if it is missing (so whatever writes into it next
/// finds it private from the first byte), or makes the existing file private.
pub fn private_file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => tighten(path, "file"),
        Err(e) => Err(e),
    }
}

/// Makes the existing file `path` private; a missing one is fine.
pub fn tighten_file_if_present(path: &Path) -> io::Result<()> {
    match tighten(path, "file") {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Writes `contents` into the new file `path`, private from the moment it exists. Another process
/// watching the folder sees the whole file or none: it is written under a hidden name first.
pub fn write_private_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a file name is needed"))?;
    let mut partial_name = std::ffi::OsString::from(".");
    partial_name.push(name);
    partial_name.push(".part");
    let partial = path.with_file_name(partial_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE);
    }
    let written = options
        .open(&partial)
        .and_then(|mut file| file.write_all(contents))
        .and_then(|()| std::fs::rename(&partial, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

#[cfg(unix)]
fn tighten(path: &Path, what: &str) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let private = if what == "folder" {
        PRIVATE_DIR
    } else {
        PRIVATE_FILE
    };
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    // Only group and other bits are taken away; an owner who made a file read-only keeps it so.
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let tightened = mode & private;
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(tightened)) {
        // Owned by another user (a mounted volume, a restore by root): only its owner can fix
        // it, and refusing to start would not protect it any better.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            tracing::warn!(
                path = %path.display(),
                "the {what} is open to other users (mode {mode:03o}) and cannot be changed by \
                 this user ({e}); its owner should make it {tightened:03o}"
            );
            return Ok(());
        }
        other => other?,
    }
    tracing::warn!(
        path = %path.display(),
        "the {what} was open to other users (mode {mode:03o}); its mode is now {tightened:03o}"
    );
    Ok(())
}

#[cfg(not(unix))]
fn tighten(path: &Path, _what: &str) -> io::Result<()> {
    std::fs::metadata(path).map(drop)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn loose_files_and_folders_are_tightened_and_private_ones_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("data");
        std::fs::create_dir(&folder).unwrap();
        set_mode(&folder, 0o775);
        private_dir(&folder).unwrap();
        assert_eq!(mode(&folder), 0o700);

        let file = folder.join("secret");
        std::fs::write(&file, "x").unwrap();
        set_mode(&file, 0o664);
        private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(std::fs::read(&file).unwrap(), b"x", "the content is kept");

        // The owner's own choice (read-only) survives.
        set_mode(&file, 0o444);
        tighten_file_if_present(&file).unwrap();
        assert_eq!(mode(&file), 0o400);
        tighten_file_if_present(&folder.join("missing")).unwrap();
        tighten_dir_if_present(&folder.join("missing")).unwrap();
        assert!(!folder.join("missing").exists());
    }

    #[test]
    fn an_existing_parent_is_not_ours_to_change() {
        let dir = tempfile::tempdir().unwrap();
        set_mode(dir.path(), 0o755);
        let nested = dir.path().join("a/b");
        create_private_dir(&nested).unwrap();
        assert_eq!(mode(dir.path()), 0o755);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&nested), 0o700);
    }

    #[test]
    fn a_private_file_appears_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.eml");
        write_private_file(&path, b"hello").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["m.eml"], "no partial file is left behind");
    }
}
