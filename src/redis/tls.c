/*-------------------------------------------------------------------------
 *
 * tls.c
 *	  TLS for the worker id claim (rediss://): the handshake, under the
 *	  claim's deadline and cancellable like every other wait, with the
 *	  server's certificate checked against snowid.redis_tls_ca_file (or the
 *	  system's CAs) and its host name checked and sent as SNI; and why a
 *	  handshake failed, in words a user can act on.  The host checked is
 *	  the one connected to: a sentinel's, the master a sentinel names, the
 *	  node a MOVED or ASK names; the handshake completes before any command
 *	  (AUTH first) is sent.  The client key is loaded only if its file is
 *	  readable by the server's user alone, and an encrypted one only with
 *	  the passphrase of snowid.redis_tls_key_passphrase_file: OpenSSL
 *	  never prompts.
 *
 * The SSL object is made here (verification, host name, SNI) and handed to
 * hiredis (redisInitiateSSL), which reads and writes through it and frees
 * it with the connection; the handshake is driven here, so that it waits
 * like every other step.  Only hiredis
 * 1.x built with TLS (hiredis_ssl) offers that; built without it, this file
 * holds stubs and snowid_redis_parse_url() refuses rediss:// URLs.  No
 * shared state, no locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "redis/secret.h"
#include "redis/tls.h"

#ifdef SNOWID_HAVE_HIREDIS_SSL

#include <arpa/inet.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "storage/latch.h"
#include "util/secret_file.h"

/* The longest CA, certificate or key file read, in bytes */
#define SNOWID_TLS_FILE_MAX		(4 * 1024 * 1024)

/*
 * What OpenSSL's passphrase callback may give for the key: the passphrase
 * of snowid.redis_tls_key_passphrase_file, or none; whether OpenSSL asked.
 */
typedef struct SnowidTlsPassphrase
{
	bool		have;
	bool		asked;
	char		text[SNOWID_REDIS_PASSWORD_LEN];	/* secret */
} SnowidTlsPassphrase;

static SSL_CTX *snowid_tls_context(const SnowidRedisTls *tls,
								   SnowidRedisResult *result);
static char *snowid_tls_file(const char *path, const char *setting,
							  bool secret, size_t *size,
							  SnowidRedisResult *result);
static void snowid_tls_file_free(char *data, size_t size);
static bool snowid_tls_use_ca(SSL_CTX *ctx, const char *path,
							  SnowidRedisResult *result);
static bool snowid_tls_use_cert(SSL_CTX *ctx, const char *path,
								SnowidRedisResult *result);
static bool snowid_tls_use_key(SSL_CTX *ctx, const SnowidRedisTls *tls,
							   SnowidRedisResult *result);
static int	snowid_tls_passphrase(char *buf, int size, int rwflag,
								  void *userdata);
static bool snowid_tls_check_host(SSL *ssl, const char *host,
								  SnowidRedisResult *result);
static void snowid_tls_handshake_failure(SSL *ssl, const char *host,
										 int ssl_error,
										 SnowidRedisResult *result);
static bool snowid_tls_alert_failure(unsigned long err,
									 SnowidRedisResult *result);
static int	snowid_tls_no_client_cert(SSL *ssl, X509 **cert, EVP_PKEY **key);

/*
 * snowid_tls_no_client_cert
 *		OpenSSL calls this when the server asks for a client certificate and
 *		none is set: note it, so that when the server then drops the
 *		connection (with TLS 1.3 it does so after the handshake, and the
 *		alert saying why may be lost) the message can say why.
 */
static int
snowid_tls_no_client_cert(SSL *ssl, X509 **cert, EVP_PKEY **key)
{
	SnowidRedisConn *conn = (SnowidRedisConn *) SSL_get_app_data(ssl);

	if (conn != NULL)
		conn->tls_cert_requested = true;
	return 0;
}

/*
 * snowid_tls_handshake
 *		Does the TLS handshake on conn's socket before the deadline and
 *		hands the session to hiredis.  False with result filled on failure.
 */
bool
snowid_tls_handshake(SnowidRedisConn *conn, const SnowidRedisNode *node,
					 const SnowidRedisTls *tls, SnowidRedisResult *result)
{
	SSL_CTX    *ctx;
	SSL		   *ssl;

	ctx = snowid_tls_context(tls, result);
	if (ctx == NULL)
		return false;
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);			/* ssl holds a reference */
	if (ssl == NULL)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "Out of memory while setting up TLS.");
		return false;
	}
	conn->tls = ssl;
	SSL_set_app_data(ssl, conn);
	if (!snowid_tls_check_host(ssl, node->host, result))
		return false;

	/*
	 * hiredis sets the socket and starts the handshake; on a non-blocking
	 * connection it returns as soon as the handshake would block.  From
	 * then on it owns ssl and frees it with the connection.
	 */
	ERR_clear_error();
	if (redisInitiateSSL(conn->context, ssl) != REDIS_OK)
	{
		snowid_tls_handshake_failure(ssl, node->host, SSL_ERROR_SSL, result);
		return false;
	}
	conn->tls_on = true;

	/* drive the rest of the handshake under the deadline */
	for (;;)
	{
		int			rc;
		int			error;

		ERR_clear_error();
		rc = SSL_connect(ssl);
		if (rc == 1)
			return true;
		error = SSL_get_error(ssl, rc);
		if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE)
		{
			if (!snowid_conn_wait(conn, error == SSL_ERROR_WANT_READ ?
								  WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
								  result))
			{
				snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
								  "The TLS handshake did not complete within snowid.redis_timeout_ms (%d ms); check that the port is Redis' TLS port (tls-port).",
								  conn->deadline->timeout_ms);
				return false;
			}
		}
		else
		{
			snowid_tls_handshake_failure(ssl, node->host, error, result);
			return false;
		}
	}
}

/*
 * snowid_tls_context
 *		A client context that verifies the server against the CA file (or
 *		the system's CAs) and presents the client certificate, if any.
 */
static SSL_CTX *
snowid_tls_context(const SnowidRedisTls *tls, SnowidRedisResult *result)
{
	SSL_CTX    *ctx = SSL_CTX_new(TLS_client_method());
	bool		have_ca = tls->ca_file != NULL && tls->ca_file[0] != '\0';
	bool		have_cert = tls->cert_file != NULL && tls->cert_file[0] != '\0';
	bool		have_key = tls->key_file != NULL && tls->key_file[0] != '\0';

	if (ctx == NULL)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "Out of memory while setting up TLS.");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_client_cert_cb(ctx, snowid_tls_no_client_cert);

	if (have_ca && !snowid_tls_use_ca(ctx, tls->ca_file, result))
	{
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (!have_ca && SSL_CTX_set_default_verify_paths(ctx) != 1)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The system's CA certificates could not be loaded.");
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (have_cert != have_key)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "snowid.redis_tls_cert_file and snowid.redis_tls_key_file must be set together.");
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (have_cert && !snowid_tls_use_cert(ctx, tls->cert_file, result))
	{
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (have_key && !snowid_tls_use_key(ctx, tls, result))
	{
		SSL_CTX_free(ctx);
		return NULL;
	}
	ERR_clear_error();
	return ctx;
}

/*
 * snowid_tls_file
 *		The contents of the file setting names (path), read from the
 *		descriptor its checks were made on: a regular file (a FIFO or a
 *		device would block for good), and with secret one that only the
 *		server's user may read.  Nothing opens the file by its name again,
 *		so a file swapped in after the checks is not read.  malloc'd, for
 *		snowid_tls_file_free(); NULL with result filled on failure.
 */
static char *
snowid_tls_file(const char *path, const char *setting, bool secret,
				size_t *size, SnowidRedisResult *result)
{
	char		problem[SNOWID_SECRET_PROBLEM_LEN];
	struct stat st;
	char	   *data;
	ssize_t		n;
	int			fd;

	if (secret)
	{
		fd = snowid_secret_file_open(path, setting, result);
		if (fd >= 0 && fstat(fd, &st) != 0)
		{
			snprintf(problem, sizeof(problem), "Could not read \"%s\": %m.",
					 path);
			close(fd);
			fd = -1;
			snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP, "%s", problem);
		}
	}
	else
	{
		fd = snowid_file_open(path, &st, problem, sizeof(problem));
		if (fd < 0)
			snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
							  "The file named by %s: %s", setting, problem);
	}
	if (fd < 0)
		return NULL;
	if (st.st_size > SNOWID_TLS_FILE_MAX)
	{
		close(fd);
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The file \"%s\" named by %s is larger than %d bytes.",
						  path, setting, SNOWID_TLS_FILE_MAX);
		return NULL;
	}
	/* malloc: OpenSSL reads it, and no error may leave it unwiped */
	data = malloc((size_t) st.st_size + 1);
	if (data == NULL)
	{
		close(fd);
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "Out of memory while reading \"%s\".", path);
		return NULL;
	}
	n = snowid_secret_read(fd, data, (size_t) st.st_size + 1);
	if (n < 0 || n > st.st_size)
	{
		snprintf(problem, sizeof(problem),
				 n < 0 ? "Could not read \"%s\": %m." :
				 "The file \"%s\" changed while it was read.", path);
		close(fd);
		snowid_tls_file_free(data, (size_t) st.st_size + 1);
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP, "%s", problem);
		return NULL;
	}
	close(fd);
	*size = (size_t) n;
	return data;
}

/*
 * snowid_tls_file_free
 *		Wipes and frees what snowid_tls_file() read.
 */
static void
snowid_tls_file_free(char *data, size_t size)
{
	if (data == NULL)
		return;
	explicit_bzero(data, size);
	free(data);
}

/*
 * snowid_tls_use_ca
 *		Trusts the certificates (and honours the revocation lists) of the
 *		CA file of snowid.redis_tls_ca_file, as
 *		SSL_CTX_load_verify_locations() would, read once by
 *		snowid_tls_file().
 */
static bool
snowid_tls_use_ca(SSL_CTX *ctx, const char *path, SnowidRedisResult *result)
{
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	STACK_OF(X509_INFO) *infos = NULL;
	size_t		size;
	char	   *data = snowid_tls_file(path, "snowid.redis_tls_ca_file", false,
									   &size, result);
	BIO		   *bio;
	int			certs = 0;
	bool		ok = true;

	if (data == NULL)
		return false;
	bio = BIO_new_mem_buf(data, (int) size);
	if (bio != NULL)
		infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
	for (int i = 0; infos != NULL && i < sk_X509_INFO_num(infos); i++)
	{
		X509_INFO  *info = sk_X509_INFO_value(infos, i);

		if (info->x509 != NULL)
		{
			ok &= X509_STORE_add_cert(store, info->x509) == 1;
			certs++;
		}
		if (info->crl != NULL)
			ok &= X509_STORE_add_crl(store, info->crl) == 1;
	}
	if (infos != NULL)
		sk_X509_INFO_pop_free(infos, X509_INFO_free);
	BIO_free(bio);
	snowid_tls_file_free(data, size);
	if (!ok || certs == 0)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The CA file \"%s\" named by snowid.redis_tls_ca_file could not be read or holds no certificate.",
						  path);
		return false;
	}
	return true;
}

/*
 * snowid_tls_use_cert
 *		Presents the client certificate of snowid.redis_tls_cert_file, and
 *		the chain after it in the file, as
 *		SSL_CTX_use_certificate_chain_file() would, read once by
 *		snowid_tls_file().
 */
static bool
snowid_tls_use_cert(SSL_CTX *ctx, const char *path, SnowidRedisResult *result)
{
	size_t		size;
	char	   *data = snowid_tls_file(path, "snowid.redis_tls_cert_file",
									   false, &size, result);
	BIO		   *bio;
	X509	   *cert = NULL;
	bool		ok;

	if (data == NULL)
		return false;
	bio = BIO_new_mem_buf(data, (int) size);
	if (bio != NULL)
		cert = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL);
	ok = cert != NULL && SSL_CTX_use_certificate(ctx, cert) == 1 &&
		SSL_CTX_clear_chain_certs(ctx) == 1;
	X509_free(cert);
	while (ok)
	{
		X509	   *ca = PEM_read_bio_X509(bio, NULL, NULL, NULL);

		if (ca == NULL)
			break;				/* the end of the file, or no certificate */
		if (SSL_CTX_add0_chain_cert(ctx, ca) != 1)
		{
			X509_free(ca);
			ok = false;
		}
	}
	BIO_free(bio);
	snowid_tls_file_free(data, size);
	ERR_clear_error();
	if (!ok)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The client certificate \"%s\" named by snowid.redis_tls_cert_file could not be read.",
						  path);
	return ok;
}

/*
 * snowid_tls_passphrase
 *		OpenSSL's callback for the passphrase of an encrypted key: the one
 *		of snowid.redis_tls_key_passphrase_file, or none.  Without it OpenSSL
 *		would prompt on the server's terminal and wait.
 */
static int
snowid_tls_passphrase(char *buf, int size, int rwflag, void *userdata)
{
	SnowidTlsPassphrase *passphrase = (SnowidTlsPassphrase *) userdata;
	int			len;

	if (passphrase == NULL)
		return 0;
	passphrase->asked = true;
	if (!passphrase->have || size <= 0)
		return 0;
	len = (int) strlen(passphrase->text);
	if (len > size)
		return 0;
	memcpy(buf, passphrase->text, len);
	return len;
}

/*
 * snowid_tls_use_key
 *		Loads the client key of snowid.redis_tls_key_file into ctx, read
 *		once from the file checked to be readable by the server's user
 *		alone, with the passphrase of snowid.redis_tls_key_passphrase_file
 *		if it is encrypted; never prompts.  Says no more about the key than
 *		its file's name, whether it is encrypted and whether it matches.
 */
static bool
snowid_tls_use_key(SSL_CTX *ctx, const SnowidRedisTls *tls,
				   SnowidRedisResult *result)
{
	SnowidTlsPassphrase passphrase;
	EVP_PKEY   *key = NULL;
	BIO		   *bio;
	char	   *data;
	size_t		size;
	bool		loaded;

	memset(&passphrase, 0, sizeof(passphrase));
	if (tls->key_passphrase_file != NULL &&
		tls->key_passphrase_file[0] != '\0')
	{
		if (!snowid_secret_file_read(tls->key_passphrase_file,
									 "snowid.redis_tls_key_passphrase_file",
									 passphrase.text,
									 sizeof(passphrase.text), result))
			return false;
		passphrase.have = true;
	}
	data = snowid_tls_file(tls->key_file, "snowid.redis_tls_key_file", true,
						   &size, result);
	if (data == NULL)
	{
		explicit_bzero(&passphrase.text, sizeof(passphrase.text));
		return false;
	}
	bio = BIO_new_mem_buf(data, (int) size);
	if (bio != NULL)
		key = PEM_read_bio_PrivateKey(bio, NULL, snowid_tls_passphrase,
									  &passphrase);
	loaded = key != NULL && SSL_CTX_use_PrivateKey(ctx, key) == 1;
	EVP_PKEY_free(key);
	BIO_free(bio);
	snowid_tls_file_free(data, size);
	explicit_bzero(&passphrase.text, sizeof(passphrase.text));

	if (!loaded && passphrase.asked && !passphrase.have)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The private key \"%s\" named by snowid.redis_tls_key_file is encrypted, and snowid.redis_tls_key_passphrase_file names no file with its passphrase.",
						  tls->key_file);
	else if (!loaded && passphrase.asked)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The private key \"%s\" named by snowid.redis_tls_key_file could not be decrypted with the passphrase of snowid.redis_tls_key_passphrase_file.",
						  tls->key_file);
	else if (!loaded || SSL_CTX_check_private_key(ctx) != 1)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
						  "The private key \"%s\" named by snowid.redis_tls_key_file could not be read or does not match the client certificate.",
						  tls->key_file);
	else
		return true;
	return false;
}

/*
 * snowid_tls_check_host
 *		Makes the handshake check that the certificate names host (a DNS
 *		name or an IP address), and sends a host name as SNI.
 */
static bool
snowid_tls_check_host(SSL *ssl, const char *host, SnowidRedisResult *result)
{
	unsigned char addr[16];
	bool		is_ip = inet_pton(AF_INET, host, addr) == 1 ||
		inet_pton(AF_INET6, host, addr) == 1;
	X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

	if (is_ip)
	{
		if (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1)
		{
			snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
							  "Could not set up the check of the server's IP address.");
			return false;
		}
		return true;
	}
	X509_VERIFY_PARAM_set_hostflags(param,
									X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_set1_host(ssl, host) != 1 ||
		SSL_set_tlsext_host_name(ssl, host) != 1)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "Could not set up the check of the server's host name.");
		return false;
	}
	return true;
}

/*
 * snowid_tls_handshake_failure
 *		Says why the handshake failed: the certificate check first, then a
 *		TLS alert from the server, then OpenSSL's own reason.
 */
static void
snowid_tls_handshake_failure(SSL *ssl, const char *host, int ssl_error,
							 SnowidRedisResult *result)
{
	long		verify = SSL_get_verify_result(ssl);
	unsigned long err = ERR_peek_last_error();

	switch (verify)
	{
		case X509_V_OK:
			break;
		case X509_V_ERR_HOSTNAME_MISMATCH:
		case X509_V_ERR_IP_ADDRESS_MISMATCH:
			snowid_redis_fail(result, SNOWID_REDIS_TLS_HOSTNAME,
							  "The server's certificate does not name \"%s\", the host connected to (the one in snowid.redis_url, or one that a sentinel or a Redis Cluster redirection named); nothing was sent to it.",
							  host);
			return;
		case X509_V_ERR_CERT_HAS_EXPIRED:
		case X509_V_ERR_CERT_NOT_YET_VALID:
			snowid_redis_fail(result, SNOWID_REDIS_TLS_EXPIRED,
							  "The server's certificate is %s.",
							  verify == X509_V_ERR_CERT_HAS_EXPIRED ?
							  "expired" : "not valid yet");
			return;
		case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
		case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
		case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
		case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
		case X509_V_ERR_CERT_UNTRUSTED:
			snowid_redis_fail(result, SNOWID_REDIS_TLS_UNTRUSTED,
							  "The server's certificate is not signed by a trusted CA: %s.",
							  X509_verify_cert_error_string(verify));
			return;
		default:
			snowid_redis_fail(result, SNOWID_REDIS_TLS_UNTRUSTED,
							  "The server's certificate was not accepted: %s.",
							  X509_verify_cert_error_string(verify));
			return;
	}

	if (err != 0 && snowid_tls_alert_failure(err, result))
		return;
	if (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "The server closed the connection during the TLS handshake; check that it speaks TLS on that port.");
	else if (err != 0 && ERR_reason_error_string(err) != NULL)
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "The TLS handshake failed: %s.",
						  ERR_reason_error_string(err));
	else
		snowid_redis_fail(result, SNOWID_REDIS_TLS_FAILED,
						  "The TLS handshake failed.");
}

/*
 * snowid_tls_alert_failure
 *		If OpenSSL's error is an alert by which the server refused our
 *		client certificate (or its absence), say so.
 */
static bool
snowid_tls_alert_failure(unsigned long err, SnowidRedisResult *result)
{
	switch (ERR_GET_REASON(err))
	{
#ifdef SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED
		case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
#endif
		case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
		case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
		case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
		case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
		case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
		case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
			snowid_redis_fail(result, SNOWID_REDIS_TLS_CLIENT_CERT,
							  "The server refused the TLS connection (%s): it requires a client certificate that it trusts.",
							  ERR_reason_error_string(err));
			return true;
	}
	return false;
}

/*
 * snowid_tls_explain_failure
 *		After hiredis failed to read or write on a TLS connection: if TLS
 *		knows why (with TLS 1.3 a server refuses a client certificate only
 *		after the handshake), fill result and return true.
 */
bool
snowid_tls_explain_failure(SnowidRedisConn *conn, SnowidRedisResult *result)
{
	unsigned long err;

	if (!conn->tls_on)
		return false;
	err = ERR_peek_last_error();
	if (err == 0 && conn->tls_cert_requested)
	{
		snowid_redis_fail(result, SNOWID_REDIS_TLS_CLIENT_CERT,
						  "The server asked for a client certificate, none is set, and the server then closed the connection.");
		return true;
	}
	if (err == 0)
		return false;
	if (snowid_tls_alert_failure(err, result))
		return true;
	snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
					  "TLS error: %s.",
					  ERR_reason_error_string(err) ?
					  ERR_reason_error_string(err) : "unknown");
	return true;
}

/*
 * snowid_tls_pending
 *		Whether TLS holds decrypted bytes that hiredis has not read yet.
 */
bool
snowid_tls_pending(const SnowidRedisConn *conn)
{
	return conn->tls_on && SSL_pending((SSL *) conn->tls) > 0;
}

/*
 * snowid_tls_free
 *		Frees the SSL object unless hiredis owns it (and frees it with the
 *		connection).
 */
void
snowid_tls_free(SnowidRedisConn *conn)
{
	if (conn->tls != NULL && !conn->tls_on)
		SSL_free((SSL *) conn->tls);
	conn->tls = NULL;
	ERR_clear_error();
}

#else							/* !SNOWID_HAVE_HIREDIS_SSL */

/*
 * Built without hiredis_ssl: snowid_redis_parse_url() refuses rediss://,
 * so no connection ever asks for TLS.
 */
bool
snowid_tls_handshake(SnowidRedisConn *conn, const SnowidRedisNode *node,
					 const SnowidRedisTls *tls, SnowidRedisResult *result)
{
	snowid_redis_fail(result, SNOWID_REDIS_TLS_SETUP,
					  "snowid was built without TLS: it needs hiredis 1.x built with TLS (hiredis_ssl).");
	return false;
}

bool
snowid_tls_pending(const SnowidRedisConn *conn)
{
	return false;
}

void
snowid_tls_free(SnowidRedisConn *conn)
{
	conn->tls = NULL;
}

bool
snowid_tls_explain_failure(SnowidRedisConn *conn, SnowidRedisResult *result)
{
	return false;
}

#endif							/* SNOWID_HAVE_HIREDIS_SSL */
