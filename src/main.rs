use std::io::{BufRead, IsTerminal};

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use kuryr::app::config::{Cli, Command, Settings, UserCommand};
use kuryr::app::startup::{Application, shutdown_signal, system_clock};
use kuryr::auth::hasher::{Hasher, HasherSettings};
use kuryr::db::{self, Database};
use kuryr::service::accounts;

// Every request allocates and frees many small values on several threads (actix's workers, the
// readers, the writer lane); glibc's allocator showed in every profile of the move path, and
// jemalloc does this work with less contention and fewer cache misses.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("KURYR_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Openapi = cli.command {
        print!("{}", kuryr::api::openapi::YAML.as_str());
        return Ok(());
    }
    // What goes into it later is created private; a folder from before is made so now.
    let data_dir = &cli.storage.data_dir;
    kuryr::files::tighten_dir_if_present(data_dir)
        .with_context(|| format!("cannot make {} private", data_dir.display()))?;
    let url = cli.storage.database_url().map_err(anyhow::Error::msg)?;
    match cli.command {
        Command::Serve(serve) => {
            let settings = Settings::from_args(&cli.storage, &serve)?;
            tracing::info!("{}", settings.mailer().describe());
            let shutdown = shutdown_signal().context("cannot listen for SIGTERM and SIGINT")?;
            let app = Application::build(settings.clone(), system_clock()).await?;
            let address = std::net::SocketAddr::new(settings.listen.ip(), app.port());
            let metrics = app
                .metrics_address()
                .map(|metrics| format!("; metrics at http://{metrics}/metrics"))
                .unwrap_or_default();
            tracing::info!(
                database = %settings.database_url.display(),
                "Kuryr is listening on http://{address} (API description at http://{address}/api/v1/openapi.yaml{metrics})"
            );
            app.run_until(shutdown).await?;
            tracing::info!("Kuryr stopped");
        }
        Command::Openapi => unreachable!("answered above"),
        Command::Migrate => {
            let applied = tokio::task::spawn_blocking(move || db::run_migrations(&url)).await??;
            println!("applied {} migration(s)", applied.len());
            for name in applied {
                println!("  {name}");
            }
        }
        Command::User(command) => {
            tokio::task::spawn_blocking({
                let url = url.clone();
                move || db::run_migrations(&url)
            })
            .await??;
            let db = Database::connect(&url, 1)?;
            let hasher = Hasher::start(HasherSettings::with_threads(1))?;
            let now = chrono::Utc::now();
            match command {
                UserCommand::Create { username, email } => {
                    let password = read_password()?;
                    let new = accounts::NewAccount {
                        username,
                        email,
                        password,
                    };
                    let user = accounts::register(&db, &hasher, None, new, now)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    println!("created user {} ({})", user.username, user.id);
                    println!(
                        "{} is not confirmed yet; no mail goes to it until the user asks for a confirmation mail (POST /api/v1/me/email/confirmation) and follows its link",
                        user.email
                    );
                }
                UserCommand::SetPassword { username } => {
                    let password = read_password()?;
                    accounts::reset_password(&db, &hasher, username.clone(), password, now)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    println!("password of {username} changed; older tokens no longer work");
                }
            }
        }
    }
    Ok(())
}

/// One line from standard input, so passwords stay out of the shell history and process list.
fn read_password() -> anyhow::Result<String> {
    eprintln!("password (one line on standard input):");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the password from standard input")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
