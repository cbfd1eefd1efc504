//! The redactor's detection rate on a corpus of realistic fake secrets, each
//! inside the tool output it would come in (env dumps, config files, `ps`
//! lines, service-account JSON, curl output…): every kind issue 39 found
//! passing plus the kinds the redactor handled before. None is a live
//! credential: each was made up with the right shape.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)]

/// `(kind, tool output, the secret that must not survive)`.
const CORPUS: &[(&str, &str, &str)] = &[
    // Slack webhook URLs.
    ("slack-webhook", "$ cat .env\nSLACK_WEBHOOK_URL=https://hooks.slack.com/services/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\nLOG_LEVEL=info\n", "x8Kd2Lm9Qp4Rs7Tv1Wy3Zb6C"),
    ("slack-webhook", "notify:\n  webhook: \"https://hooks.slack.com/services/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\"\n", "Q1w2E3r4T5y6U7i8O9p0A1s2"),
    ("slack-webhook", "> POST /workflows/T01ABCDEF/A02GHIJKL/403519378912/kR3mT8vX2qY7nB4c HTTP/1.1\n> Host: hooks.slack.com\ncurl -X POST -d @payload.json https://hooks.slack.com/workflows/T01ABCDEF/A02GHIJKL/403519378912/kR3mT8vX2qY7nB4c\nok\n", "kR3mT8vX2qY7nB4c"),
    // Stripe.
    ("stripe-webhook-secret", "$ stripe listen --forward-to localhost:4242/webhook\n> Ready! Your webhook signing secret is whsec_4b7Hq2Xk9Lm3Np8Rt5Vw1Yz6Ac0Df2Gj (^C to quit)\n", "whsec_4b7Hq2Xk9Lm3Np8Rt5Vw1Yz6Ac0Df2Gj"),
    ("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET=whsec_9Tz3Yq6Wp1Ln4Kr8Mx2Bv7Cs5Dh0Fg3J\nSTRIPE_PUBLISHABLE_KEY=pk_test_51H8xYzAbCdEf\n", "whsec_9Tz3Yq6Wp1Ln4Kr8Mx2Bv7Cs5Dh0Fg3J"),
    ("stripe-key", "settings.py:41:STRIPE_SECRET_KEY = \"sk_live_51Hx8YzAbC2dEfGh3IjKl4MnOp5QrSt6Uv\"\n", "sk_live_51Hx8YzAbC2dEfGh3IjKl4MnOp5QrSt6Uv"),
    ("stripe-key", "  stripe:\n    key: sk_test_4eC39HqLyjWDarjtT1zdp7dcQ2Xm8Ln3\n", "sk_test_4eC39HqLyjWDarjtT1zdp7dcQ2Xm8Ln3"),
    ("stripe-key", "export STRIPE_RESTRICTED=rk_live_51Hb7Qw3Er9Ty2Ui8Op4As6Df1Gh5Jk\n", "rk_live_51Hb7Qw3Er9Ty2Ui8Op4As6Df1Gh5Jk"),
    // GCP service account with escaped newlines.
    ("gcp-service-account", "$ cat sa.json\n{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-project-4821\",\n  \"private_key_id\": \"3c9e1f7a5b2d8e4f6a0c9b7d5e3f1a8c6b4d2e0f\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"svc@demo-project-4821.iam.gserviceaccount.com\"\n}\n", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"),
    ("gcp-service-account", "GOOGLE_CREDENTIALS={\"type\":\"service_account\",\"private_key\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEAx4Fq8Ld2Nw7Kp3Rt9Vm5Yb1Zc6Xa0Sd4Fg8Hj2Kl7Mn3Pq\\n-----END RSA PRIVATE KEY-----\\n\"}\n", "MIIEpAIBAAKCAQEAx4Fq8Ld2Nw7Kp3Rt9Vm5Yb1Zc6Xa0Sd4Fg8Hj2Kl7Mn3Pq"),
    // Django SECRET_KEY with punctuation.
    ("django-secret-key", "$ grep -n SECRET_KEY mysite/settings.py\n23:SECRET_KEY = 'django-insecure-k3$%&#9x!q@w7e^r*t(y)u-i+o=p_a2s4d6f8g0h'\n", "k3$%&#9x!q@w7e^r*t(y)u-i+o=p_a2s4d6f8g0h"),
    ("django-secret-key", "DJANGO_SECRET_KEY=\"7h#k$%2m&n@p4q!r^s*t8u-v+w=x_y3z9a0b1c%d&e\"\nDEBUG=False\n", "7h#k$%2m&n@p4q!r^s*t8u-v+w=x_y3z9a0b1c%d&e"),
    ("django-secret-key", "  File \"/app/settings/prod.py\", line 12\n    SECRET_KEY = \"q8$w%e&r#t2y!u@i^o*p4a-s+d=f_g6h0j1k3l5z7x9c\"\n", "q8$w%e&r#t2y!u@i^o*p4a-s+d=f_g6h0j1k3l5z7x9c"),
    // Passwords with spaces.
    ("password-with-spaces", "$ cat config/credentials.json\n{\n  \"username\": \"deploy\",\n  \"password\": \"correct horse battery staple 42\",\n  \"host\": \"db.internal\"\n}\n", "correct horse battery staple 42"),
    ("password-with-spaces", "$ cat docker-compose.override.yml\nservices:\n  db:\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: purple monkey dishwasher\n", "purple monkey dishwasher"),
    ("password-with-spaces", "$ cat .env.production\nDB_HOST=db.internal\nDB_PASSWORD=\"tall tree quiet river 7\"\nDB_PORT=5432\n", "tall tree quiet river 7"),
    ("password-with-spaces", "ldap:\n  bind_dn: cn=admin,dc=example,dc=org\n  bind_password: 'Winter is coming 2024!'\n", "Winter is coming 2024!"),
    ("password-with-spaces", "$ printenv | grep -i pass\nSMTP_PASSWORD=blue whale jumps high\n", "blue whale jumps high"),
    ("password-with-spaces", "{\"db\": {\"user\": \"svc\", \"passphrase\": \"seven silver spoons stir soup\"}}\n", "seven silver spoons stir soup"),
    // Docker config auth.
    ("docker-auth", "$ cat ~/.docker/config.json\n{\n\t\"auths\": {\n\t\t\"https://index.docker.io/v1/\": {\n\t\t\t\"auth\": \"ZGVwbG95OnMzY3JldC1kb2NrZXItcGFzcw==\"\n\t\t}\n\t}\n}\n", "ZGVwbG95OnMzY3JldC1kb2NrZXItcGFzcw=="),
    ("docker-auth", "{\"auths\":{\"ghcr.io\":{\"auth\":\"Ym90OmdocF8xYTJCM2M0RDVlNkY3ZzhIOWkwSg==\"},\"registry.gitlab.com\":{\"auth\":\"Y2k6Z2xwYXQteFk3eks=\"}}}\n", "Ym90OmdocF8xYTJCM2M0RDVlNkY3ZzhIOWkwSg=="),
    // DigitalOcean.
    ("digitalocean-token", "$ doctl auth init --access-token dop_v1_3f8a2c9e1b7d5f4a6c0e8b2d9f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e2b4d6f8a\n", "dop_v1_3f8a2c9e1b7d5f4a6c0e8b2d9f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e2b4d6f8a"),
    ("digitalocean-token", "DIGITALOCEAN_TOKEN=dop_v1_a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90\n", "dop_v1_a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"),
    // Vault.
    ("vault-token", "$ vault login -method=userpass username=ops\nKey                    Value\n---                    -----\ntoken                  hvs.CAESIJ8kQm3xLp7Rt2Vw9Yb4Nc6Zd1Fh5Gj0Kl3Mn8Pq2Rs7Tu\ntoken_accessor         Xq2Lm8Np4Rt6Vw1Yb3Zc9Df\n", "hvs.CAESIJ8kQm3xLp7Rt2Vw9Yb4Nc6Zd1Fh5Gj0Kl3Mn8Pq2Rs7Tu"),
    ("vault-token", "export VAULT_TOKEN=hvs.4Kp9Xm2Lq7Rw3Tz8Vn1Yb6Cd0Fg5Hj\nexport VAULT_ADDR=https://vault.internal:8200\n", "hvs.4Kp9Xm2Lq7Rw3Tz8Vn1Yb6Cd0Fg5Hj"),
    // Discord bot tokens.
    ("discord-token", "$ cat bot/.env\nDISCORD_BOT_TOKEN=MTA4NzY1NDMyMTA5ODc2NTQzMg.GhT4kL.q9Wx2Lm7Np3Rt8Vz1Yb6Cd4Fg0Hj5Kl2Mn8Pq\n", "MTA4NzY1NDMyMTA5ODc2NTQzMg.GhT4kL.q9Wx2Lm7Np3Rt8Vz1Yb6Cd4Fg0Hj5Kl2Mn8Pq"),
    ("discord-token", "Traceback (most recent call last):\n  File \"bot.py\", line 88, in <module>\n    client.run('NzkyNzE1NDU0MTk2MDg4ODQy.X-hvzA.Ovy4MCQywSkoMRRclStW4xAYK7I')\ndiscord.errors.LoginFailure: Improper token has been passed.\n", "NzkyNzE1NDU0MTk2MDg4ODQy.X-hvzA.Ovy4MCQywSkoMRRclStW4xAYK7I"),
    // --password flags.
    ("password-flag", "$ ps aux | grep mongo\nroot  1423  0.3  2.1 1503232 87412 ?  Ssl  09:12  0:41 mongod --auth --username admin --password Tr0ub4dor3x --bind_ip_all\n", "Tr0ub4dor3x"),
    ("password-flag", "$ history | tail -3\n  501  redis-cli -h cache.internal --pass S3cr3tRedis!\n  502  psql -h db\n", "S3cr3tRedis!"),
    ("password-flag", "+ docker login registry.example.com --username ci --password 'q7W!e9R@t2Y#'\nLogin Succeeded\n", "q7W!e9R@t2Y#"),
    ("password-flag", "$ cat /proc/2213/cmdline | tr '\\0' ' '\njava -jar app.jar --db-password=Hx8Kp2Lm9Q --spring.profiles.active=prod\n", "Hx8Kp2Lm9Q"),
    ("password-flag", "Running: mysqladmin -u root --password \"Sup3r S3cret\" status\n", "Sup3r S3cret"),
    // Kinds handled before.
    ("openai-key", "$ env | sort\nHOME=/root\nOPENAI_API_KEY=sk-proj-4fQ2b9XwLm8Zt0aP3kR7sVn1Yc6Ue5Jh2Kd\nPATH=/usr/bin\n", "sk-proj-4fQ2b9XwLm8Zt0aP3kR7sVn1Yc6Ue5Jh2Kd"),
    ("anthropic-key", "client = anthropic.Anthropic(api_key=\"sk-ant-api03-Zx9Lw2Qm4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl9Zx\")\n", "sk-ant-api03-Zx9Lw2Qm4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl9Zx"),
    ("aws-access-key-id", "$ aws configure list\n      Name                    Value             Type    Location\n   access_key     ****************MPLE shared-credentials-file\n$ cat ~/.aws/credentials\n[default]\naws_access_key_id = AKIAZ7Q3L9MXK2P4R8TV\n", "AKIAZ7Q3L9MXK2P4R8TV"),
    ("aws-secret-key", "[default]\naws_access_key_id = AKIAZ7Q3L9MXK2P4R8TV\naws_secret_access_key = Zq3x9Lm2Np8Rt4Vw6Yb1Cd5Fg7Hj0Kl2Mn4Pq6Rs\n", "Zq3x9Lm2Np8Rt4Vw6Yb1Cd5Fg7Hj0Kl2Mn4Pq6Rs"),
    ("aws-secret-key", "AccessKeyId,SecretAccessKey\nAKIAZ7Q3L9MXK2P4R8TV,k8Vn2Xq7Lm4Rt9Wz1Yb6Cd3Fg0Hj5Kp8Ms2Np7Qa\n", "k8Vn2Xq7Lm4Rt9Wz1Yb6Cd3Fg0Hj5Kp8Ms2Np7Qa"),
    ("github-token", "$ git remote -v\norigin\thttps://x-access-token:ghs_7Yq2Wm9Lp4Rt8Vn3Xb6Kz1Cd5Fh0Gj2Ls4N@github.com/acme/app.git (fetch)\n", "ghs_7Yq2Wm9Lp4Rt8Vn3Xb6Kz1Cd5Fh0Gj2Ls4N"),
    ("github-token", "$ gh auth status\n  ✓ Token: ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R\n", "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    ("gitlab-token", "variables:\n  GITLAB_TOKEN: glpat-xY7zK2mN9pQ4rS6tU8vW\n", "glpat-xY7zK2mN9pQ4rS6tU8vW"),
    ("slack-token", "SLACK_BOT_TOKEN=xoxb-2847561930-4728193650271-Kd8Lm2Np7Qr4St9Vw1Xy3Zb\n", "xoxb-2847561930-4728193650271-Kd8Lm2Np7Qr4St9Vw1Xy3Zb"),
    ("google-api-key", "<meta-data android:name=\"com.google.android.geo.API_KEY\" android:value=\"AIzaSyB3kX9mL2pQ7rT4vW8yZ1cD5fG0hJ6nK3s\"/>\n", "AIzaSyB3kX9mL2pQ7rT4vW8yZ1cD5fG0hJ6nK3s"),
    ("huggingface-token", "$ huggingface-cli whoami\nToken: hf_Qx7Lm2Np9Rt4Vw8Yb1Cd6Fg3Hj0Kl5Mn2Pq7Rs\n", "hf_Qx7Lm2Np9Rt4Vw8Yb1Cd6Fg3Hj0Kl5Mn2Pq7Rs"),
    ("npm-token", "$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken=npm_8Kq2Lx7Mp4Nr9St3Vw6Yz1Bc5Df0Gh2Jk7Lm\n", "npm_8Kq2Lx7Mp4Nr9St3Vw6Yz1Bc5Df0Gh2Jk7Lm"),
    ("sendgrid-key", "SENDGRID_API_KEY=SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm\n", "wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm"),
    ("jwt", "$ curl -v https://api.internal/me\n> GET /me HTTP/1.1\n> Cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsIm5hbWUiOiJvcHMifQ.Xk9Lm2Np7Qr4St8Vw1Yz3Bc6Df0Gh5Jk\n", "Xk9Lm2Np7Qr4St8Vw1Yz3Bc6Df0Gh5Jk"),
    ("authorization", "$ curl -v -H 'Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543' https://api.example.com\n> Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543\n< HTTP/1.1 200 OK\n", "8f14e45fceea167a5a36dedd4bea2543"),
    ("authorization", "requests.exceptions.HTTPError: 401 for url https://api.example.com/v2 headers={'Authorization': 'Basic ZGVwbG95OnMzY3JldA=='}\n", "ZGVwbG95OnMzY3JldA=="),
    ("private-key", "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBk4Pq7Ld2Nw9Kx3Rt8Vm5Yb1Zc6Xa0Sd4Fg8Hj2Kl7Mn3PqAAAAJg1Xq\n-----END OPENSSH PRIVATE KEY-----\n", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"),
    ("private-key", "$ kubectl get secret tls -o yaml\ndata:\n  tls.key: |\n    -----BEGIN EC PRIVATE KEY-----\n    MHcCAQEEIBk4Pq7Ld2Nw9Kx3Rt8Vm5Yb1Zc6Xa0Sd4Fg8Hj2Kl7oAoGCCqGSM49\n    -----END EC PRIVATE KEY-----\n", "MHcCAQEEIBk4Pq7Ld2Nw9Kx3Rt8Vm5Yb1Zc6Xa0Sd4Fg8Hj2Kl7oAoGCCqGSM49"),
    ("url-credentials", "$ env | grep URL\nDATABASE_URL=postgres://app:Pg7xK2mL9qR4@db.internal:5432/app\nREDIS_URL=redis://cache:6379\n", "Pg7xK2mL9qR4"),
    ("url-credentials", "Cloning into 'repo'...\nfatal: unable to access 'https://deploy:Gh9Lm2Xq7Np4@git.example.com/acme/repo.git/': Could not resolve host\n", "Gh9Lm2Xq7Np4"),
    ("mysql-password", "$ ps -ef | grep mysql\nroot 812 1 0 09:01 ? 00:00:02 mysqldump -u backup -pB4ckupPw99 --all-databases\n", "B4ckupPw99"),
    ("password-assignment", "$ cat config/database.yml\nproduction:\n  adapter: postgresql\n  username: rails\n  password: Xk29-mPq7!vR\n", "Xk29-mPq7!vR"),
    ("password-assignment", "spring.datasource.password=Sp7ingB00t#Db\nspring.datasource.username=app\n", "Sp7ingB00t#Db"),
    ("azure-key", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA==;EndpointSuffix=core.windows.net\n", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA=="),
    ("twilio-token", "TWILIO_ACCOUNT_SID=AC4f8e2a9c1b7d3e5f6a0c8b2d4e6f8a1c\nTWILIO_AUTH_TOKEN=9c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a\n", "9c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"),
    ("api-key-header", "$ http POST api.example.com/v1/jobs X-API-Key:3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e\nHTTP/1.1 201 Created\n", "3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e"),
    ("client-secret", "$ cat client_secret.json\n{\"installed\":{\"client_id\":\"4821-abc.apps.googleusercontent.com\",\"client_secret\":\"GOCSPX-9Xq2Lm7Np4Rt8Vw1Yb3Zc6Df0G\"}}\n", "GOCSPX-9Xq2Lm7Np4Rt8Vw1Yb3Zc6Df0G"),
];

/// Share of the corpus that must be masked.
const MIN_DETECTION_RATE: f64 = 0.95;

/// Whether `secret` is masked in `out`: it is gone, and so is every run of 8
/// of its characters (a half-masked secret is a leak).
fn masked(out: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    let window = chars.len().min(8);
    !chars
        .windows(window)
        .any(|w| out.contains(&w.iter().collect::<String>()))
}

#[test]
fn the_corpus_covers_every_kind_issue_39_found_passing() {
    assert!(CORPUS.len() >= 55, "{} cases", CORPUS.len());
    for kind in [
        "slack-webhook",
        "stripe-webhook-secret",
        "gcp-service-account",
        "django-secret-key",
        "password-with-spaces",
        "docker-auth",
        "digitalocean-token",
        "vault-token",
        "discord-token",
        "password-flag",
    ] {
        assert!(CORPUS.iter().filter(|c| c.0 == kind).count() >= 2, "{kind}");
    }
    for (_, output, secret) in CORPUS {
        assert!(output.contains(secret), "{secret}");
    }
}

#[test]
fn the_redactor_masks_at_least_95_percent_of_the_corpus() {
    let missed: Vec<&(&str, &str, &str)> = CORPUS
        .iter()
        .filter(|(_, output, secret)| !masked(&tracelite::redact::redact(output).0, secret))
        .collect();
    for (kind, output, _) in &missed {
        eprintln!("missed {kind}: {output:?}");
    }
    let rate = 1.0 - missed.len() as f64 / CORPUS.len() as f64;
    eprintln!(
        "detection rate {:.1}% ({} of {})",
        rate * 100.0,
        CORPUS.len() - missed.len(),
        CORPUS.len()
    );
    assert!(rate >= MIN_DETECTION_RATE, "detection rate {rate}");
}
